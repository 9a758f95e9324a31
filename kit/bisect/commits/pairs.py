"""The probe pairs a commit answer rests on, run where the search's own probes left them out.

Each claim of the commit phase needs its pair (docs/commits.md, "Reading the answer"):

* **a commit, found on one build**: the commit and its parent on the range's
  other build too, wherever JAX runs both there (:func:`pair_on_other_build`).
  Both change there as well: the Python made the change, on either build.
  Neither changes: the commit makes the change only with the build it was
  found on. Where the pair cannot run, that is said, with why.
* **not in JAX's Python**: the same Python giving both outcomes on two builds
  is not enough; the range's old-end Python must give the new outcome on the
  newer build too (:func:`old_end_on_newer_build`). Where the commits before
  some X cannot run on the newer build (JAX refuses a jaxlib newer than
  itself), a Python change that needs the newer jaxlib was never ruled out:
  the answer becomes "the build matters", with the untested span and leads
  (commits whose diff adds or edits code beside a version gate the two
  builds answer apart, :func:`kit.history.leads.gated_leads`).
"""

from __future__ import annotations

import dataclasses

from ...history.commits import python_changes
from ...history.version_file import dotted
from .builds import Build
from .candidates import CommitCandidate, forced_on, on_build
from .finding import CommitLevel, PairProbe, TieBreak, Untested, alone_note
from .probes import CommitProber
from .runnable import Runnable
from ..search import ProbeOutcome, bisect


def refusal(candidate: CommitCandidate, build: Build, runnable: Runnable) -> str:
    """Why ``candidate`` cannot run on ``build`` ("" where it can): JAX's own version check, or what it died of."""
    moved = on_build(candidate, build)
    if moved is None:
        accepts = candidate.accepts
        return (f"JAX refuses jaxlib {build.jaxlib}: its jax/version.py accepts {accepts}" if accepts is not None
                else "its jax/version.py names no jaxlib range")
    runs = runnable(moved)
    return "" if runs.ok else f"JAX itself does not run there ({runs.error.splitlines()[0][:160] if runs.error else '?'})"


def probe_on(prober: CommitProber, level: CommitLevel, candidate: CommitCandidate, build: Build,
             runnable: Runnable) -> tuple[PairProbe, ProbeOutcome | None]:
    """``candidate`` run on ``build`` where JAX runs it there; the probe as the report prints it, and its outcome."""
    why = refusal(candidate, build, runnable)
    if why:
        return PairProbe(candidate.commit, build.jaxlib, f"could not run: {why}"), None
    moved = on_build(candidate, build)  # keyed ``commit@jaxlib-X``, as the search's crossed probes are
    assert moved is not None
    prober.subject.add(moved)
    outcome = level.outcomes.get(moved.version) or prober(moved.version)
    level.outcomes[moved.version] = outcome
    return (PairProbe(candidate.commit, build.jaxlib, outcome.value, laid=alone_note(moved)),
            None if outcome is ProbeOutcome.SKIP else outcome)


def pair_on_other_build(prober: CommitProber, level: CommitLevel, builds: list[Build],
                        runnable: Runnable) -> TieBreak | None:
    """The commit found on one build, and its parent, on each other build of the range."""
    result = level.result
    if result is None or not result.exact:
        return None
    same, changed = prober.subject.commits[result.last_same], prober.subject.commits[result.first_different]
    found_on = changed.build
    if found_on is None or same.build is None or same.build.jaxlib != found_on.jaxlib:
        return None
    old = result.old_outcome
    pair = (PairProbe(same.commit, found_on.jaxlib, old.value, laid=alone_note(same)),
            PairProbe(changed.commit, found_on.jaxlib, _other(old).value, laid=alone_note(changed)))
    for build in (b for b in builds if b.jaxlib != found_on.jaxlib):
        before, got_before = probe_on(prober, level, same, build, runnable)
        after, got_after = (probe_on(prober, level, changed, build, runnable) if got_before is not None
                            else (PairProbe(changed.commit, build.jaxlib, "not run: its parent could not run there"),
                                  None))
        evidence = pair + (before, after)
        if got_before is None or got_after is None:
            why = (f"found on jaxlib {found_on.jaxlib}; on jaxlib {build.jaxlib} the pair is untested "
                   f"({before.outcome if got_before is None else after.outcome})")
            forced, forced_why = _forced_pair(prober, level, (same, changed), (got_before, got_after), build,
                                              found_on, old, runnable)
            return TieBreak("untested-elsewhere", None, found_on, build, None, why + forced_why,
                            evidence=evidence + forced)
        if got_before is old and got_after is not old:
            why = (f"{changed.short} changes the outcome on jaxlib {found_on.jaxlib} and on jaxlib {build.jaxlib}: "
                   "the Python made the change, on either build")
            return TieBreak("python-both", None, found_on, build, got_after, why, evidence=evidence)
        why = (f"{same.short} → {changed.short} gave {old.value} → {_other(old).value} on jaxlib {found_on.jaxlib} but "
               f"{got_before.value} → {got_after.value} on jaxlib {build.jaxlib}: {changed.short} makes this change "
               f"only with jaxlib {found_on.jaxlib}")
        kind = "build-dependent" if dotted(found_on.jaxlib) > dotted(build.jaxlib) else "build-dependent-older"
        return TieBreak(kind, None, build, found_on, got_after, why, evidence=evidence, needs=found_on.jaxlib)
    return None


def _forced_pair(prober: CommitProber, level: CommitLevel, pair: tuple[CommitCandidate, CommitCandidate],
                 got: tuple[ProbeOutcome | None, ProbeOutcome | None], build: Build, found_on: Build, old: ProbeOutcome,
                 runnable: Runnable) -> tuple[tuple[PairProbe, ...], str]:
    """The found pair on ``build`` with JAX's version check relaxed where that check alone refused it.

    A lead on whether the commit needs its build, said as one: the answer
    stays "untested" there (a forced probe never carries an answer alone).
    """
    outcomes: list[ProbeOutcome | None] = list(got)
    probes: list[PairProbe] = []
    for index, candidate in enumerate(pair):
        if outcomes[index] is not None or on_build(candidate, build) is not None:
            continue  # it ran unforced, or what refused it was more than the version check
        probe, outcome = probe_forced(prober, level, candidate, build, runnable)
        if probe is None:
            return tuple(probes), ""
        probes.append(probe)
        outcomes[index] = outcome
        if outcome is None:
            return tuple(probes), (f"; forced past JAX's version check, {candidate.short} still "
                                   f"{probe.outcome.replace(' even forced', '')} there")
    before, after = outcomes
    if before is None or after is None:
        return tuple(probes), ""
    shows = (f"the same change there: a lead that it does not need jaxlib {found_on.jaxlib}"
             if before is old and after is not old
             else f"no such change there: a lead that it needs jaxlib {found_on.jaxlib}")
    return tuple(probes), (f"; forced past JAX's version check (a lead, never an answer alone), the pair gave "
                           f"{before.value} → {after.value} on jaxlib {build.jaxlib}, {shows}")


def old_end_on_newer_build(prober: CommitProber, level: CommitLevel, tie: TieBreak, newer: Build,
                           old: ProbeOutcome, runnable: Runnable) -> TieBreak:
    """Keep "not in JAX's Python" only where the old end's Python gave the new outcome on ``newer``.

    Else the oldest commit that runs on ``newer`` stands in, and the commits
    before it are the untested span: "the build matters", not the binary.
    """
    candidates = level.candidates
    first = candidates[0]
    oldest = _oldest_running_on(candidates, newer, runnable)
    if oldest is None:
        untested = Untested(first.commit, candidates[-1].commit, len(candidates), newer.jaxlib,
                            refusal(first, newer, runnable), candidates[-1].commit)
        return dataclasses.replace(tie, kind="untested", untested=untested, why=(
            f"the build matters: {tie.why}; but no commit of the range runs on jaxlib {newer.jaxlib} to compare"))
    probe, got = probe_on(prober, level, candidates[oldest], newer, runnable)
    evidence = tie.evidence + (probe,)
    if got is old:  # a Python change on the newer build alone, which its bisection could not name exactly
        return dataclasses.replace(tie, kind="unknown", evidence=evidence, why=(
            f"{tie.why}; but {candidates[oldest].short}, the oldest commit that runs on jaxlib {newer.jaxlib}, gave "
            f"{old.value} there: a change in JAX's Python on that build made it, not found exactly"))
    if oldest == 0:
        why = f"{tie.why}; and the range's old end {first.short} gave {probe.outcome} on jaxlib {newer.jaxlib} too"
        return dataclasses.replace(tie, why=why, evidence=evidence)
    stand_in = candidates[oldest]
    if not python_changes(prober.subject.history, first.commit, stand_in.commit):
        evidence = evidence[:-1] + (dataclasses.replace(probe, note=f"the old end {first.short}'s Python: only "
                                                                   "jax/version.py differs"),)
        why = (f"{tie.why}; and {stand_in.short}, the oldest commit that runs on jaxlib {newer.jaxlib}, gave "
               f"{probe.outcome} there with the old end's Python ({first.short}; only jax/version.py differs)")
        return dataclasses.replace(tie, why=why, evidence=evidence)
    refused = refusal(first, newer, runnable)
    before = candidates[oldest - 1]
    forced_probe, forced_got = probe_forced(prober, level, first, newer, runnable)
    if forced_probe is not None:
        evidence += (forced_probe,)
    if forced_got is not None and forced_got is not old:
        why = (f"{tie.why}; and the old end's Python ({first.short}), forced onto jaxlib {newer.jaxlib} past JAX's "
               f"version check, gave {forced_got.value} there too (the commits before {stand_in.short} cannot run "
               "there unforced)")
        return dataclasses.replace(tie, why=why, evidence=evidence)
    lead = _forced_bisect(prober, level, oldest, newer, old, runnable) if forced_got is old else None
    untested = Untested(first.commit, before.commit, oldest, newer.jaxlib, refused, stand_in.commit, lead)
    forced = (f"; forced past JAX's version check, the old end's Python gave {old.value} there"
              if forced_got is old else "")
    why = (f"the build matters: {tie.why}; but the Python before {stand_in.short} could not run on jaxlib "
           f"{newer.jaxlib} ({refused}), so a change in JAX's Python that needs the newer jaxlib was not ruled out "
           f"({oldest} commits, {first.short} .. {before.short}, untested there){forced}")
    return dataclasses.replace(tie, kind="untested", why=why, evidence=evidence, untested=untested)


def probe_forced(prober: CommitProber, level: CommitLevel, candidate: CommitCandidate, build: Build,
                 runnable: Runnable) -> tuple[PairProbe | None, ProbeOutcome | None]:
    """``candidate`` on ``build`` past JAX's "jaxlib newer than jax" check; (None, None) where that is not the refusal."""
    forced = forced_on(candidate, build)
    if forced is None:
        return None, None
    runs = runnable(forced)
    if not runs.ok:
        why = runs.error.splitlines()[0][:160] if runs.error else "?"
        return PairProbe(candidate.commit, build.jaxlib, f"could not run even forced ({why})", forced=True), None
    prober.subject.add(forced)
    outcome = level.outcomes.get(forced.version) or prober(forced.version)
    level.outcomes[forced.version] = outcome
    return (PairProbe(candidate.commit, build.jaxlib, outcome.value, forced=True),
            None if outcome is ProbeOutcome.SKIP else outcome)


def _forced_bisect(prober: CommitProber, level: CommitLevel, oldest: int, build: Build, old: ProbeOutcome,
                   runnable: Runnable) -> tuple[str, str] | None:
    """Where the outcome changes on ``build`` across the untested span, forced: (commit, title), a lead only."""
    span = [forced_on(c, build) for c in level.candidates[:oldest]]
    stand_in = on_build(level.candidates[oldest], build)
    if stand_in is None or any(c is None for c in span):
        return None
    moved = [c for c in span if c is not None] + [stand_in]
    for candidate in moved:
        prober.subject.add(candidate)
    keys = [c.version for c in moved]
    new = level.outcomes.get(keys[-1])
    if new is None or new is old:
        return None
    result = bisect(keys, prober, old_outcome=old, cache={keys[0]: old, keys[-1]: new})
    level.outcomes.update({k: result.cache[k] for k in result.probes})
    if not result.exact:
        return None
    found = prober.subject.commits[result.first_different]
    return found.commit, found.title


def _oldest_running_on(candidates: list[CommitCandidate], build: Build, runnable: Runnable) -> int | None:
    """The index of the oldest commit of the range that JAX runs on ``build`` (a bisection: a suffix runs)."""
    accepted = [i for i, c in enumerate(candidates) if on_build(c, build) is not None]
    if not accepted:
        return None
    if not refusal(candidates[accepted[0]], build, runnable):
        return accepted[0]
    low, high = 0, len(accepted) - 1  # accepted[low] does not run; find the first that does
    if refusal(candidates[accepted[high]], build, runnable):
        return None
    while high - low > 1:
        middle = (low + high) // 2
        if refusal(candidates[accepted[middle]], build, runnable):
            low = middle
        else:
            high = middle
    return accepted[high]


def _other(outcome: ProbeOutcome) -> ProbeOutcome:
    return ProbeOutcome.BAD if outcome is ProbeOutcome.GOOD else ProbeOutcome.GOOD
