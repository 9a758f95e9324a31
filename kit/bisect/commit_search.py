"""``--commits``: from the two releases the search ended on, down to the commit.

The same pure search walks a new list: the commits between the two release
tags (:mod:`kit.history.commit_range`), each laid over a release environment
it accepts (:mod:`.commits.probes`). Around it, three things only commits need:

* **One build where possible.** When the old end and the new end run on
  different jaxlib builds, the newest commit on the old end's build is probed
  first: if it still behaves like the old end, the Python up to there did not
  make the change on that build, and the search goes straight to where the
  builds switch. The old end then waits: it is run only if the answer lands
  next to it (:func:`~kit.bisect.search.bisect_taking_old_end`).
* **Binary or Python?** When the first changed commit ran on another build
  than the last unchanged one, the outcome changed where the probes switched
  jaxlib builds, so the binary may be the cause. One more probe tells them
  apart where a commit accepts both builds: the same Python on the other
  build. Same Python, other outcome: the change is in the compiled jaxlib,
  "not in JAX's Python". Likewise when both ends of the range, on the same
  build, give the same outcome.
* **Merges.** A merge found to be the first changed commit is opened: the
  search continues along the branch it merged (:func:`~kit.history.commit_range.merged_branch`).
"""

from __future__ import annotations

import collections
import dataclasses
import functools
import math
import time
from dataclasses import dataclass, field
from typing import Callable, Iterable

from packaging.version import Version

from ..records import Source
from ..config import Matrix
from ..errors import UsageError
from ..history.commit_range import CommitRange, merged_branch, release_range, resolve, tag, within
from ..history.commits import version_gates
from ..history.source import History, ensure_tags
from ..install import built_env
from ..log_events import Log
from .commits import (
    Build, CommitCandidate, CommitFinding, CommitLevel, CommitProber, CommitSubject, PairProbe, PairStore, Runnable,
    TieBreak, assign_builds, commit_candidates, describe_commits, old_end_on_newer_build, on_build,
    binary_only_from_four, pair_on_other_build, same_python_other_build, span_on, tag_as_old_end,
)
from .probe import Prober, ReleaseSubject
from .report import BisectFinding
from ..run.jax_runs import extension_version
from .search import ProbeOutcome, bisect, bisect_taking_old_end, expected_probes, verify_bounds

MIN_SKIP_BUDGET = 4
"""Skipped commit probes allowed per search at least; more for longer lists (log2 of their length)."""
MAX_MERGE_DEPTH = 3
"""Merges opened one inside another at most this deep (a PR merging a branch that merged a branch ...)."""


@dataclass
class CommitPhase:
    """What the commit phase needs from the release phase."""

    matrix: Matrix
    finding: BisectFinding
    releases: Prober[ReleaseSubject]
    history: History
    log: Log
    cache: dict[str, ProbeOutcome] = field(default_factory=dict)
    runnable: Runnable | None = None
    """Which (commit, build) pairs JAX itself runs on, asked once each (`kit.bisect.commits.runnable`)."""


def narrow_to_commits(phase: CommitPhase) -> CommitFinding:
    """Search the commits between the release result's two ends; the finding says what was found and how."""
    started = time.monotonic()
    finding, log = phase.finding, phase.log
    assert finding.result is not None
    old, new = sorted((finding.result.last_same, finding.result.first_different), key=Version)
    ensure_tags(phase.history, [tag(old), tag(new)], log)
    commit_range = release_range(phase.history, old, new)
    search, runs = phase.finding.specs.search, phase.finding.specs.runs
    if search.good_commit or search.bad_commit:  # the older commit starts the search (the bad one, for a fix)
        start, end = ((search.bad_commit, search.good_commit) if finding.fix
                      else (search.good_commit, search.bad_commit))
        commit_range = within(phase.history, commit_range, start, end)
        log(commit_range.shape)
    builds = release_builds(phase)
    prober = _prober(phase)
    phase.runnable = Runnable(PairStore(phase.matrix.layout.runnable, runs.backend, read=not search.fresh),
                              prober.subject.pair_runs)
    try:
        level = _search_level(phase, prober, commit_range, builds, old_tag=tag(old))
        result = CommitFinding(phase.history.origin, builds, [level])
        _open_merges(phase, prober, result, builds)
        _tell_binary_from_python(phase, prober, result)
        if result.verdict.about_the_build:
            result.extension_versions = _extension_versions(phase, builds)
        commits = prober.subject.commits
        result.commit_probes = [key for key in prober.ran_now if key in commits]
        result.observations = {k: v for k, v in prober.observations.items() if k in commits}
        result.probed_candidates = dict(commits)
        describe_commits(phase.history, result, runs.explained_op)
        result.seconds = time.monotonic() - started
        result.runnable_checks = (phase.runnable.asked, round(phase.runnable.seconds, 1))
        return result
    finally:
        prober.subject.close()


def release_builds(phase: CommitPhase) -> list[Build]:
    """The builds commits may run on: the bad-side release's environment first, then the good side's."""
    finding = phase.finding
    assert finding.result is not None
    last_same, first_different = finding.result.last_same, finding.result.first_different
    bad, good = (last_same, first_different) if finding.fix else (first_different, last_same)
    candidates = {c.version: c for c in finding.candidates}
    builds: list[Build] = []
    for side, version in (("bad", bad), ("good", good)):
        seen = finding.observations.get(version)
        jaxlib = (seen.installed.jaxlib if seen else None) or candidates[version].jaxlib
        python = (seen.installed.python if seen else None) or candidates[version].python
        if jaxlib is None or any(b.jaxlib == jaxlib for b in builds):
            continue  # one build per jaxlib: a jax-only release shares its predecessor's
        # Built as this bisect installs it (the run spec's key: its pins and extra packages), not some other way.
        built = built_env(phase.matrix, version, phase.releases.subject.spec.install) is not None
        builds.append(Build(version, jaxlib, python, built, side))
    return builds


def _prober(phase: CommitPhase) -> CommitProber:
    """Commits as the subject (laid over environments the release subject prepares), judged by the release judge.

    The judge is the release phase's own: a verdict's probe cache, or a
    metric's baseline set by the bounds. Commits are added per search.
    """
    releases = phase.releases
    layout = phase.matrix.layout
    subject = CommitSubject(releases.subject, phase.history, layout.commit_records, layout.commit_bytecode)
    prober = Prober(subject, releases.judge, releases.crash, phase.log)
    prober.fold_index = True  # a commit no build runs is counted in one grouped line ("run on no build here")
    return prober


def _search_level(phase: CommitPhase, prober: CommitProber, commit_range: CommitRange,
                  builds: list[Build], old_tag: str | None = None) -> CommitLevel:
    """Verify the ends, probe the newest commit on the old end's build, then bisect."""
    candidates = commit_candidates(phase.history, commit_range, builds)
    if phase.runnable is not None:
        candidates = _runnable_builds(phase, candidates, builds, phase.runnable)
    candidates, said = tag_as_old_end(phase.history, old_tag, candidates, builds) if old_tag else (candidates, "")
    if said:  # said once, on the console and in the report's range sentence
        commit_range = dataclasses.replace(commit_range, shape=f"{commit_range.shape}; {said}")
    for candidate in candidates:
        prober.subject.add(candidate)
    keys = [c.version for c in candidates]
    old_outcome = phase.finding.bounds.old_outcome
    cache = phase.cache
    _known(phase, prober, candidates, cache)
    runnable = sum(1 for c in candidates if not c.problem)
    phase.log(f"{commit_range.shape}. {len(candidates)} commits ({runnable} runnable on "
              f"{', '.join(str(b) for b in builds)}); about {expected_probes(runnable)} probes")
    level = CommitLevel(commit_range, candidates)
    probe = SkipBudget(prober, max(MIN_SKIP_BUDGET, math.ceil(math.log2(max(runnable, 2)))))
    steer = functools.partial(_probe_old_build_end, probe, candidates, cache)
    if _old_end_can_wait(candidates):
        level.problem, level.result, unprobed_old_end = bisect_taking_old_end(
            keys, probe, cache, old_outcome=old_outcome, before=steer)
        level.old_end_taken = keys[0] if unprobed_old_end else None
    else:
        level.problem = verify_bounds(keys, probe, cache, old_outcome=old_outcome)
        if level.problem is None:
            steer()
            level.result = bisect(keys, probe, old_outcome=old_outcome, cache=cache)
    level.outcomes = {k: cache[k] for k in keys if k in cache and k not in probe.unprobed}
    level.unprobed = list(probe.unprobed)
    return level


def _runnable_builds(phase: CommitPhase, candidates: list[CommitCandidate], builds: list[Build],
                     runnable: Runnable) -> list[CommitCandidate]:
    """Each commit on a build JAX itself runs it on; say where each build's span ends and what stopped it."""
    asked = runnable.asked
    placed = assign_builds(candidates, builds, runnable)
    if runnable.asked == asked and placed == candidates:
        return placed
    for build in builds:
        on = [c for c in placed if c.build is not None and c.build.jaxlib == build.jaxlib]
        if on:
            phase.log(f"jaxlib {build.jaxlib} runs {len(on)} commits ({on[0].short} .. {on[-1].short})")
    stranded = [c for c in placed if c.problem]
    if stranded:
        phase.log(f"{len(stranded)} commits ({stranded[0].short} .. {stranded[-1].short}) run on no build here "
                  f"(skipped unrun, never good or bad): {_grouped(c.problem for c in stranded)}")
    phase.log(f"runnable pairs: {runnable.asked - asked} laid over and run, {runnable.seconds:.1f} s in all so far")
    return placed


def _grouped(reasons: Iterable[str]) -> str:
    """Reasons counted, most common first: ``239 × JAX itself cannot run it ...; 1 × it needs ...``."""
    counts = collections.Counter(reasons)
    return "; ".join(f"{n} × {reason}" for reason, n in counts.most_common(4)) + \
        (f"; and {len(counts) - 4} other reasons" if len(counts) > 4 else "")


def _extension_versions(phase: CommitPhase, builds: list[Build]) -> dict[str, int | None]:
    """Each build's binary version (what JAX's gates compare), asked of its environment where it is built."""
    versions: dict[str, int | None] = {}
    for build in builds:
        environment = phase.releases.subject.environment_of(build.release)
        if environment is None and build.built:  # every probe came from the cache: reuse it, never build one
            environment = phase.releases.subject.prepare(build.release).environment
        versions[build.jaxlib] = extension_version(environment) if environment is not None else None
    return versions


class SkipBudget:
    """The prober, until ``limit`` probes of one search were skipped; after that every commit is a skip, unrun.

    A stretch of commits that cannot run on the builds at hand (a module the
    old jaxlib lacks) would otherwise be walked one commit at a time, since
    the search steps to a neighbour of each skipped one. Past the budget the
    search ends with the untested stretch as its short list, at once.
    """

    def __init__(self, prober: CommitProber, limit: int) -> None:
        self.prober, self.limit = prober, limit
        self.skipped = 0
        self.unprobed: list[str] = []

    def __call__(self, key: str) -> ProbeOutcome:
        if self.skipped >= self.limit:
            self.unprobed.append(key)
            return ProbeOutcome.SKIP
        outcome = self.prober(key)
        if outcome is ProbeOutcome.SKIP and Source.RUN in self.prober.observations[key].came_from.steps:
            self.skipped += 1  # only skips that cost a run: a commit no build accepts is skipped for free
        return outcome


def _known(phase: CommitPhase, prober: CommitProber, candidates: list[CommitCandidate],
           cache: dict[str, ProbeOutcome]) -> None:
    """What is known before any commit runs: the probe cache, and each release tag on its own build.

    A release's wheel is built from its tag's tree, so "the tag's Python on
    that release's own jaxlib" is the release probe itself: no run needed.
    """
    tags = {_tag_commit(phase, version): version for version in phase.finding.observations}
    for candidate in candidates:
        if candidate.problem or candidate.version in cache:
            continue
        # A metric judge remembers nothing: it judges against this run's baseline (as for releases).
        cached = prober.remembered(candidate.version)
        release = tags.get(candidate.commit)
        seen = phase.finding.observations.get(release) if release else None
        if cached is None and seen is not None and candidate.build and candidate.build.release == release:
            cached = seen.with_came_from(source=Source.RELEASE)
        if cached is not None:
            cache[candidate.version] = prober.remember(candidate.version, cached)


def _tag_commit(phase: CommitPhase, version: str) -> str | None:
    try:
        return resolve(phase.history, tag(version))
    except UsageError:
        return None  # a release whose tag the clone lacks is simply not reused


def _old_end_can_wait(candidates: list[CommitCandidate]) -> bool:
    """Whether the old end's probe can wait until the answer rests on it (`bisect_taking_old_end`).

    When the two ends run on different builds, the newest commit on the old
    build is probed anyway, and it tells as much as the old end would: if it
    still behaves like the old release, the Python did not change it on that
    build. On one build, the old end is the one probe that says "not in the
    Python" (both ends alike), so it runs first.
    """
    first, last = candidates[0], candidates[-1]
    return (not first.problem and first.build is not None and last.build is not None
            and first.build.jaxlib != last.build.jaxlib)


def _probe_old_build_end(prober: Callable[[str], ProbeOutcome], candidates: list[CommitCandidate],
                         cache: dict[str, ProbeOutcome]) -> None:
    """The newest commit on the old end's build, probed first when the new end runs on another build."""
    first, last = candidates[0].build, candidates[-1].build
    if first is None or last is None or first.jaxlib == last.jaxlib:
        return
    on_first = [c for c in candidates[1:-1] if c.build is not None and c.build.jaxlib == first.jaxlib]
    if on_first and on_first[-1].version not in cache:
        cache[on_first[-1].version] = prober(on_first[-1].version)


def _open_merges(phase: CommitPhase, prober: CommitProber, found: CommitFinding, builds: list[Build]) -> None:
    """While the answer is a merge, search the branch it merged; keep the merge when that branch cannot say."""
    for _ in range(MAX_MERGE_DEPTH):
        level = found.levels[-1]
        if level.result is None or not level.result.exact:
            return
        branch = merged_branch(phase.history, level.result.first_different)
        if branch is None:
            return
        phase.log(branch.shape)
        inner = _search_level(phase, prober, branch, builds)
        found.levels.append(inner)
        if inner.result is None:
            return  # the branch's ends do not show the change alone: the merge itself stays the answer


def _tell_binary_from_python(phase: CommitPhase, prober: CommitProber, found: CommitFinding) -> None:
    """Where the outcome changed with the jaxlib build (or not at all on one build), ask the binary.

    Every verdict ends with its probe pairs (`kit.bisect.commits.pairs`): a
    commit found on one build is run with its parent on the other; "not in
    JAX's Python" also needs the old end's Python to give the new outcome on
    the newer build, or it is "the build matters", with the span left untested.
    """
    level, runnable = found.answer_level, phase.runnable
    if level.problem is not None:
        tie = _ends_on_one_build(prober, level, found.builds)
        newer = [b for b in found.builds if tie is not None and tie.old_build is not None
                 and b.jaxlib != tie.old_build.jaxlib]
        if tie is not None and newer and runnable is not None and level.problem.got is not None:
            tie = old_end_on_newer_build(prober, level, tie, newer[-1], level.problem.got, runnable)
            if tie.kind == "binary" and tie.evidence and tie.evidence[-1].outcome == level.problem.got.value:
                tie = dataclasses.replace(tie, kind="unknown", why=(
                    f"{tie.why}; but the old end's Python gave {level.problem.got.value} on jaxlib {newer[-1].jaxlib} "
                    "too, so a Python change on that build alone made it (not bisected)"))
        found.tie_break = tie
        return
    if level.result is None:
        return
    same = prober.subject.commits[level.result.last_same]
    changed = prober.subject.commits[level.result.first_different]
    if same.build is None or changed.build is None:
        return
    if same.build.jaxlib == changed.build.jaxlib:
        if runnable is not None:
            found.tie_break = pair_on_other_build(prober, level, found.builds, runnable)
        return
    found.tie_break = same_python_other_build(prober, same, changed, level)
    if found.tie_break.kind == "binary" and runnable is not None:
        found.tie_break = _change_on_newer_build(prober, level, same, changed.build, runnable) or \
            old_end_on_newer_build(prober, level, found.tie_break, changed.build, level.result.old_outcome, runnable)
    found.tie_break = binary_only_from_four(found.tie_break, changed, same.build, level.result.old_outcome)


def _ends_on_one_build(prober: CommitProber, level: CommitLevel, builds: list[Build]) -> TieBreak | None:
    """Both ends of the range, on the same build, gave the same outcome: the Python did not change it.

    The newest end is the newer release's own tag, and that release gave the
    other outcome on its own jaxlib: the same Python, two builds, two outcomes.
    """
    problem = level.problem
    assert problem is not None
    if problem.kind != "unchanged":
        return None
    first, last = level.candidates[0], level.candidates[-1]
    if first.build is None or last.build is None or first.build.jaxlib != last.build.jaxlib:
        return None
    outcome = problem.got
    why = (f"{level.commit_range.new_name}'s own Python ({last.short}) gave {outcome.value if outcome else '?'} on "
           f"jaxlib {last.build.jaxlib}, as the old end {first.short} did on that build, while the release made "
           f"from that tag, on its own jaxlib, gave the other outcome: the same Python behaves differently on two "
           f"jaxlib builds")
    # The pair this rests on, printed beside it: both ends on the one build, and the new end's release on its own.
    evidence = [PairProbe(first.commit, first.build.jaxlib, outcome.value if outcome else "?"),
                PairProbe(last.commit, last.build.jaxlib, outcome.value if outcome else "?")]
    own = [b for b in builds
           if b.jaxlib != last.build.jaxlib and b.release == level.commit_range.new_name.removeprefix("jax-v")]
    if own and outcome is not None:
        other = ProbeOutcome.GOOD if outcome is ProbeOutcome.BAD else ProbeOutcome.BAD
        evidence.append(PairProbe(last.commit, own[0].jaxlib, other.value, note="the release's own probe"))
    return TieBreak("binary", last, first.build, None, outcome, why, evidence=tuple(evidence))


def _change_on_newer_build(prober: CommitProber, level: CommitLevel, same: CommitCandidate, build: Build,
                           runnable: Runnable) -> TieBreak | None:
    """Before calling it the binary, ask the newer build alone: does the Python change the outcome there?

    The last unchanged commit gave the new outcome on ``build``. If the oldest
    commit that runs on ``build`` gives the old one there, some commit between
    them changes the behaviour on that build only (a path JAX's Python takes
    with the newer jaxlib): bisected on ``build``, it becomes the answer.
    None: the build alone made the change, as far as these commits run.
    """
    assert level.result is not None
    old = level.result.old_outcome
    end = [c.version for c in level.candidates].index(same.version)
    accepted = [i for i in range(end + 1) if on_build(level.candidates[i], build) is not None]
    span = span_on(level.candidates, build, accepted, runnable, suffix=True)
    if len(span.runs) < 2:
        return None
    moved = [c for c in (on_build(level.candidates[i], build) for i in sorted(span.runs)) if c is not None]
    for candidate in moved:
        prober.subject.add(candidate)
    keys = [c.version for c in moved]
    first = prober(keys[0])
    level.outcomes[keys[0]] = first
    if first is not old:
        return None
    new = level.outcomes.get(keys[-1]) or prober(keys[-1])
    result = bisect(keys, prober, old_outcome=old, cache={keys[0]: old, keys[-1]: new})
    level.outcomes.update({k: result.cache[k] for k in result.probes})
    if not result.exact:
        return None
    gate = prober.subject.commits[result.first_different]
    gates = version_gates(prober.subject.history, gate.commit)
    why = (f"on jaxlib {build.jaxlib} alone, {prober.subject.commits[result.last_same].short} gave {old.value} and "
           f"{gate.short} the other outcome, while on the older build every commit up to {same.short} gave "
           f"{old.value}: {gate.short} changes the behaviour only with jaxlib {build.jaxlib}"
           + (f"; its diff gates on {', '.join(gates)}" if gates else ""))
    level.result = result
    evidence = (PairProbe(prober.subject.commits[result.last_same].commit, build.jaxlib, old.value),
                PairProbe(gate.commit, build.jaxlib, new.value),
                PairProbe(same.commit, same.jaxlib or "?", old.value))
    return TieBreak("build-dependent", gate, None, build, new, why, gates=tuple(gates), evidence=evidence)
