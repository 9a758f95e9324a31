"""``--bad-if '(a+)+$'`` over a long line: the match gives up at its limit, it never hangs.

Nested repeats backtrack in time exponential in the line's length (30 characters
take a minute); the search runs in a child interpreter that is stopped at its
limit, and the failed run is ``inconclusive`` with one sentence saying why.
docs/faults.md, "Output".
"""

from __future__ import annotations

import re
import time

import pytest

from kit.run import bounded_match
from kit.records import RunOutcome, Status, Verdict
from kit.run.failures import judge

FAILED = RunOutcome(Status.RAN, Verdict.AFFECTED, "the script exited 1 (affected)")


@pytest.mark.real_time  # waits out a real time limit
def test_a_pattern_that_backtracks_without_end_gives_up_in_its_time(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(bounded_match, "LIMIT_S", 1.0)
    tail = ["starting", "a" * 4000 + "b", "done"]
    started = time.monotonic()
    judged = judge(FAILED, 1, tail, re.compile(r"(a+)+$"), {})
    assert time.monotonic() - started < 10
    assert (judged.status, judged.verdict) == ("ran", "inconclusive")
    assert judged.reason == ("the script exited 1, and matching bad_if '(a+)+$' against the output did not finish "
                             "within 1 s (a pattern that backtracks without end, as nested repeats like '(a+)+' do), "
                             "so it was stopped; make its repeats unambiguous")
    assert judged.evidence["bad_if"]["matched"] is None
    assert "did not finish" in judged.evidence["bad_if"]["gave_up"]


def test_a_sane_pattern_still_matches_and_misses_as_before() -> None:
    tail = ["Traceback (most recent call last):", '  File "s.py", line 1, in <module>', "TypeError: bad argument"]
    matched = judge(FAILED, 1, tail, re.compile(r"TypeError: .*argument"), {})
    assert matched.verdict == "affected"
    assert matched.evidence["bad_if"]["matched"] == "TypeError: bad argument"
    missed = judge(FAILED, 1, tail, re.compile(r"(?i)segfault"), {})
    assert missed.verdict == "inconclusive"
    assert "does not match bad_if" in missed.reason
    assert "gave_up" not in missed.evidence["bad_if"]
