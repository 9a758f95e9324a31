"""kit.bisect.commits.finding: one verdict from what the commit searches found."""

from __future__ import annotations

import pytest

from kit.bisect.commits.finding import CommitFinding, CommitLevel, TieBreak
from kit.bisect.search import BisectResult, BoundsProblem, ProbeOutcome
from kit.history.commit_range import CommitRange
from kit.bisect.commits.builds import Build

RANGE = CommitRange("a" * 40, ("b" * 40, "c" * 40), "a line", "jax-v0.1.0", "jax-v0.2.0")
A, B = Build("0.1.0", "0.1.0", "3.12", True, "bad"), Build("0.2.0", "0.2.0", "3.12", True, "good")


def level(result: BisectResult[str] | None = None, problem: BoundsProblem[str] | None = None) -> CommitLevel:
    return CommitLevel(RANGE, [], problem, result)


def result(ambiguous: list[str]) -> BisectResult[str]:
    return BisectResult("a", "c", ambiguous, [], {})


UNCHANGED = BoundsProblem("unchanged", "c", ProbeOutcome.BAD, ProbeOutcome.GOOD, "still bad")


@pytest.mark.parametrize(("levels", "tie", "verdict"), [
    ([level(result([]))], None, "commit"),
    ([level(result(["b"]))], None, "short-list"),
    ([level(result([]))], TieBreak("python", None, A, B, ProbeOutcome.GOOD), "commit"),
    ([level(result([]))], TieBreak("binary", None, A, B, ProbeOutcome.BAD), "not-in-python"),
    ([level(result([]))], TieBreak("unknown", None, A, B, None), "binary-may-be-the-cause"),
    ([level(problem=UNCHANGED)], TieBreak("binary", None, A, None, ProbeOutcome.BAD), "not-in-python"),
    ([level(problem=UNCHANGED)], None, "stopped"),
    ([level(result([])), level(problem=UNCHANGED)], None, "commit"),  # a merge whose branch cannot say: the merge
])
def test_verdict(levels: list[CommitLevel], tie: TieBreak | None, verdict: str) -> None:
    found = CommitFinding("a clone", [A, B], levels, tie)
    assert found.verdict == verdict


def test_the_answer_is_the_innermost_search_that_found_one() -> None:
    outer, inner = level(result([])), level(BisectResult("x", "y", [], [], {}))
    assert CommitFinding("a clone", [A], [outer, inner]).answer_level is inner
    assert CommitFinding("a clone", [A], [outer, level(problem=UNCHANGED)]).answer_level is outer
