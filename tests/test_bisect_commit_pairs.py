"""kit.bisect.commits.pairs: a commit found on one build is probed with its parent on the other, forced where only
JAX's version check refuses the pair there, and a forced pair is a lead, never the answer."""

from __future__ import annotations

from typing import Any, Callable

from kit.bisect.commits.builds import Build
from kit.bisect.commits.candidates import CommitCandidate
from kit.bisect.commits.finding import CommitLevel
from kit.bisect.commits.pairs import pair_on_other_build
from kit.bisect.search import BisectResult, ProbeOutcome
from kit.history.commit_range import CommitRange
from kit.history.version_file import JaxlibRange
from kit.run.jax_runs import JaxRuns

OLD = Build("0.5.2", "0.5.1", "3.13", True, "bad")
NEW = Build("0.5.3", "0.5.3", "3.13", True, "good")
PARENT, FOUND = "a" * 40, "b" * 40


class Subject:
    def __init__(self, candidates: list[CommitCandidate]) -> None:
        self.commits = {c.version: c for c in candidates}

    def add(self, candidate: CommitCandidate) -> None:
        self.commits[candidate.version] = candidate


class Prober:
    """Answers a probe by ``answer(candidate)``, and records which ran."""

    def __init__(self, candidates: list[CommitCandidate], answer: Callable[[CommitCandidate], ProbeOutcome]) -> None:
        self.subject, self.answer, self.ran = Subject(candidates), answer, list[str]()

    def __call__(self, key: str) -> ProbeOutcome:
        self.ran.append(key)
        return self.answer(self.subject.commits[key])


def candidate(commit: str, accepts: JaxlibRange) -> CommitCandidate:
    return CommitCandidate(commit, (), None, "3.13", OLD.jaxlib, commit=commit, build=OLD, accepts=accepts,
                           title="t", date="2025-03-01")


def level_found_on_old(accepts: JaxlibRange) -> tuple[CommitLevel, list[CommitCandidate]]:
    """PARENT good, FOUND bad, both on jaxlib 0.5.1 (a regression found on the older build)."""
    candidates = [candidate(PARENT, accepts), candidate(FOUND, accepts)]
    result = BisectResult(PARENT, FOUND, [], [PARENT, FOUND], {PARENT: ProbeOutcome.GOOD, FOUND: ProbeOutcome.BAD})
    level = CommitLevel(CommitRange(PARENT, (FOUND,), "test"), candidates, result=result,
                        outcomes={PARENT: ProbeOutcome.GOOD, FOUND: ProbeOutcome.BAD})
    return level, candidates


def runs_everywhere(_candidate: Any) -> JaxRuns:
    return JaxRuns(True)


def test_the_pair_refused_only_by_jax_s_version_check_is_probed_forced_and_stays_a_lead() -> None:
    level, candidates = level_found_on_old(JaxlibRange("0.5.0", "0.5.2"))  # main's jax 0.5.2.dev: refuses 0.5.3
    prober = Prober(candidates, lambda c: ProbeOutcome.GOOD if c.commit == PARENT else ProbeOutcome.BAD)
    tie = pair_on_other_build(prober, level, [OLD, NEW], runs_everywhere)  # type: ignore[arg-type]
    assert tie is not None
    assert tie.kind == "untested-elsewhere"  # a forced pair never carries the answer alone
    assert prober.ran == [f"{PARENT}@jaxlib-0.5.3-forced", f"{FOUND}@jaxlib-0.5.3-forced"]
    forced = [probe for probe in tie.evidence if probe.forced]
    assert [(p.commit, p.jaxlib, p.outcome) for p in forced] == [(PARENT, "0.5.3", "good"), (FOUND, "0.5.3", "bad")]
    assert "JAX refuses jaxlib 0.5.3" in tie.why
    assert tie.why.endswith("forced past JAX's version check (a lead, never an answer alone), the pair gave good → "
                            "bad on jaxlib 0.5.3, the same change there: a lead that it does not need jaxlib 0.5.1")
    assert "(forced: JAX's version check relaxed)" in forced[0].text()


def test_a_forced_pair_that_shows_no_change_is_a_lead_that_the_commit_needs_its_build() -> None:
    level, candidates = level_found_on_old(JaxlibRange("0.5.0", "0.5.2"))
    prober = Prober(candidates, lambda c: ProbeOutcome.GOOD if c.forced or c.commit == PARENT else ProbeOutcome.BAD)
    tie = pair_on_other_build(prober, level, [OLD, NEW], runs_everywhere)  # type: ignore[arg-type]
    assert tie is not None
    assert tie.kind == "untested-elsewhere"
    assert tie.why.endswith("good → good on jaxlib 0.5.3, no such change there: a lead that it needs jaxlib 0.5.1")


def test_an_unforced_pair_decides_and_nothing_is_forced() -> None:
    level, candidates = level_found_on_old(JaxlibRange("0.5.0", "0.5.3"))  # accepts both builds
    prober = Prober(candidates, lambda c: ProbeOutcome.GOOD if c.commit == PARENT else ProbeOutcome.BAD)
    tie = pair_on_other_build(prober, level, [OLD, NEW], runs_everywhere)  # type: ignore[arg-type]
    assert tie is not None
    assert tie.kind == "python-both"
    assert not any(probe.forced for probe in tie.evidence)


def test_where_more_than_the_version_check_refuses_nothing_is_forced() -> None:
    level, candidates = level_found_on_old(JaxlibRange("0.5.0", "0.5.2"))
    prober = Prober(candidates, lambda c: ProbeOutcome.GOOD)

    def dies_forced(c: CommitCandidate) -> JaxRuns:
        return JaxRuns(not c.forced, "AttributeError: module 'jax._src.named_sharding' has no attribute 'check_pspec'")

    tie = pair_on_other_build(prober, level, [OLD, NEW], dies_forced)  # type: ignore[arg-type]
    assert tie is not None
    assert tie.kind == "untested-elsewhere"
    assert prober.ran == []
    assert tie.why.endswith(f"forced past JAX's version check, {PARENT[:10]} still could not run "
                            "(AttributeError: module 'jax._src.named_sharding' has no attribute 'check_pspec') there")
