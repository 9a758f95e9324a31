"""kit.bisect.commits.crossed: at a build switch, "the binary" only from both sides' Python run on both builds.

The case (issue 49): a jit matvec-sum miscompile that jaxlib 0.10.2 introduced on CPU. The search's pair
crossed builds (45ad7ff5c1 good on jaxlib 0.10.1, 9e4cdbd789 bad on 0.10.2) and JAX's version check kept
each side's Python off the other's build, so nothing told the binary from the Python; it was named as a commit.
"""

from __future__ import annotations

from typing import Callable

from kit.bisect.commits.builds import Build
from kit.bisect.commits.candidates import CommitCandidate
from kit.bisect.commits.crossed import binary_only_from_four, same_python_other_build
from kit.bisect.commits.finding import CommitFinding, CommitLevel
from kit.bisect.search import BisectResult, ProbeOutcome
from kit.history.commit_range import CommitRange
from kit.history.version_file import JaxlibRange
from kit.install import JAX_ALONE

OLD = Build("0.10.1", "0.10.1", "3.12", True, "good")
NEW = Build("0.10.2", "0.10.2", "3.12", True, "bad")
PARENT, BUMP = "4" * 40, "9" * 40


class Subject:
    def __init__(self, candidates: list[CommitCandidate]) -> None:
        self.commits = {c.version: c for c in candidates}

    def add(self, candidate: CommitCandidate) -> None:
        self.commits[candidate.version] = candidate


class Prober:
    """Answers a probe by ``answer(candidate)``."""

    def __init__(self, candidates: list[CommitCandidate], answer: Callable[[CommitCandidate], ProbeOutcome]) -> None:
        self.subject, self.answer = Subject(candidates), answer

    def __call__(self, key: str) -> ProbeOutcome:
        return self.answer(self.subject.commits[key])


def _level() -> tuple[CommitLevel, CommitCandidate, CommitCandidate]:
    same = CommitCandidate(PARENT, (), None, "3.12", OLD.jaxlib, commit=PARENT, build=OLD,
                           accepts=JaxlibRange("0.10.0", "0.10.1"), title="before the bump", date="2026-05-01")
    changed = CommitCandidate(BUMP, (), None, "3.12", NEW.jaxlib, commit=BUMP, build=NEW,
                              accepts=JaxlibRange("0.10.2", "0.10.2"), title="the bump", date="2026-05-02")
    result = BisectResult(PARENT, BUMP, [], [PARENT, BUMP], {PARENT: ProbeOutcome.GOOD, BUMP: ProbeOutcome.BAD})
    level = CommitLevel(CommitRange(PARENT, (BUMP,), "test"), [same, changed], result=result,
                        outcomes={PARENT: ProbeOutcome.GOOD, BUMP: ProbeOutcome.BAD})
    return level, same, changed


def by_build(runs: Callable[[CommitCandidate], bool] = lambda c: True) -> Callable[[CommitCandidate], ProbeOutcome]:
    """The binary decides: good on jaxlib 0.10.1, bad on 0.10.2, whatever Python; SKIP where ``runs`` says no."""
    return lambda c: (ProbeOutcome.GOOD if c.jaxlib == OLD.jaxlib else ProbeOutcome.BAD) if runs(c) else ProbeOutcome.SKIP


def test_the_binary_is_named_from_the_four_probes_each_side_forced_onto_the_other_build() -> None:
    level, same, changed = _level()
    prober = Prober([same, changed], by_build())
    tie = same_python_other_build(prober, same, changed, level)  # type: ignore[arg-type]
    assert tie.kind == "binary"
    assert [(p.commit[:1], p.jaxlib, p.outcome, p.forced) for p in tie.evidence] == [
        ("4", "0.10.1", "good", False), ("9", "0.10.2", "bad", False),
        ("9", "0.10.1", "good", True), ("4", "0.10.2", "bad", True)]
    assert "each side's Python ran on both builds (forced past JAX's version check where it refused)" in tie.why
    assert CommitFinding("a clone", [OLD, NEW], [level], tie).verdict == "not-in-python"


def test_a_side_that_cannot_run_on_the_other_build_even_forced_names_neither_the_binary_nor_a_commit() -> None:
    level, same, changed = _level()
    prober = Prober([same, changed], by_build(lambda c: not (c.forced and c.commit == PARENT)))
    tie = same_python_other_build(prober, same, changed, level)  # type: ignore[arg-type]
    assert tie.kind == "unknown"
    assert tie.probe is None
    # Said as no verdict, never as "could not run" alone: where JAX ran and the check was inconclusive (a tracer
    # printed another way, issue 58) the check could not tell, and the probe table says which it was.
    assert f"{PARENT[:10]} on jaxlib 0.10.2 gave no verdict even forced (the check was inconclusive there, or JAX " \
           "did not run: the probe table says which)" in tie.why
    assert len(tie.evidence) == 4  # the four, with the one that gave no verdict said so


def test_a_python_change_seen_on_the_older_build_unforced_stays_the_commit() -> None:
    level, same, changed = _level()
    both = dict(accepts=JaxlibRange("0.10.1", "0.10.2"))
    same, changed = (CommitCandidate(**{**c.__dict__, **both}) for c in (same, changed))  # type: ignore[arg-type]
    prober = Prober([same, changed], lambda c: ProbeOutcome.GOOD if c.commit == PARENT else ProbeOutcome.BAD)
    tie = same_python_other_build(prober, same, changed, level)  # type: ignore[arg-type]
    assert tie.kind == "python"
    assert not any(p.forced for p in tie.evidence)


def test_a_binary_resting_on_the_parents_python_alone_is_provisional_and_then_a_range() -> None:
    level, same, changed = _level()
    prober = Prober([same, changed], by_build(lambda c: not (c.forced and c.commit == BUMP)))
    tie = same_python_other_build(prober, same, changed, level)  # type: ignore[arg-type]
    assert tie.kind == "binary"  # provisional: the newer build alone is asked next (a build-dependent commit)
    after = binary_only_from_four(tie, changed, OLD, ProbeOutcome.GOOD)
    assert after.kind == "unknown"
    assert after.probe is None
    assert after.why.endswith("without both sides' Python on both builds, neither the binary nor a commit is named")


def test_a_side_whose_jaxlib_python_cannot_run_on_the_other_binary_runs_there_with_jax_alone() -> None:
    # jax#39103, measured: 0d099df3ed's jaxlib Python names _jax.PrimitiveType, which jaxlib 0.10.2's binary lacks,
    # so forced there with its jaxlib Python JAX cannot run; its jax/ alone over 0.10.2's own jaxlib runs, bad.
    level, same, changed = _level()
    prober = Prober([same, changed], by_build(lambda c: not (c.commit == PARENT and c.jaxlib == NEW.jaxlib
                                                             and c.laid != JAX_ALONE)))
    tie = same_python_other_build(prober, same, changed, level)  # type: ignore[arg-type]
    assert tie.kind == "binary"
    assert [(p.commit[:1], p.jaxlib, p.outcome, p.forced, p.laid) for p in tie.evidence] == [
        ("4", "0.10.1", "good", False, ""), ("9", "0.10.2", "bad", False, ""),
        ("9", "0.10.1", "good", True, ""), ("4", "0.10.2", "bad", True, JAX_ALONE)]
    assert "with that build's own jaxlib Python" in tie.why
    assert CommitFinding("a clone", [OLD, NEW], [level], tie).verdict == "not-in-python"
    # Laid with its jaxlib Python first, as the search's spans are: jax/ alone only where that could not run.
    assert [k for k in level.outcomes if k.startswith(PARENT + "@")] == [
        f"{PARENT}@jaxlib-0.10.2-forced", f"{PARENT}@jaxlib-0.10.2-forced-jax-alone"]
