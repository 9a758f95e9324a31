"""The crossed pairs at a build switch: each side's Python on the other side's build, forced where JAX refuses it.

When the last unchanged commit ran on build A and the first changed one on
build B, the search's own probes cannot tell the binary from the Python: the
pair crosses builds. Four probes can: both sides' Python on both builds. The
binary is named ("not in JAX's Python") only from those four, where the build
decided (each Python gave the old outcome on A and the new one on B). Where
JAX's version check alone keeps a side's Python off the other build (the
parent of 0.10.2's version bump refuses jaxlib 0.10.2, the bump refuses
0.10.1), it is run *forced* (`candidates.forced_on` with ``below_minimum``):
the check relaxed both ways, labelled so. Where a side cannot run on the other
build even forced, nothing is named: the answer is the range, with the probes
that ran (the jit matvec-sum miscompile of jaxlib 0.10.2 on CPU was named as a
commit, 9e4cdbd789, when nothing had forced 45ad7ff5c1 onto jaxlib 0.10.2).
"""

from __future__ import annotations

import dataclasses
from typing import Optional, Tuple

from ...history.commits import version_gates
from ...install import LAID_FORMS
from .builds import Build
from .candidates import CommitCandidate, forced_on, on_build
from .finding import CommitLevel, PairProbe, TieBreak, alone_note
from .probes import CommitProber
from ..search import ProbeOutcome

Crossed = Optional[Tuple[CommitCandidate, ProbeOutcome]]  # a runtime alias: typing spells it on Python 3.9
"""A commit run on the other build (moved or forced there) and its outcome; None where JAX did not run it."""


def same_python_other_build(prober: CommitProber, same: CommitCandidate, changed: CommitCandidate,
                            level: CommitLevel) -> TieBreak:
    """At a build switch, the crossed pairs tell the Python from the binary from a build-dependent commit.

    ``same`` (the last unchanged commit) ran on build A, ``changed`` (the first
    changed one) on build B. The changed commit on A, unforced: if it shows
    the change there too, the Python made it. Else the unchanged commit on B,
    unforced: the old outcome there means the commit makes the change, but
    only on jaxlib B. Otherwise the four probes decide: "binary" only where
    both Pythons ran on both builds (forced where need be) and the build made
    the change; else "unknown", a range with what is known.
    """
    assert same.build is not None and changed.build is not None and level.result is not None
    old = level.result.old_outcome
    new = ProbeOutcome.BAD if old is ProbeOutcome.GOOD else ProbeOutcome.GOOD
    a, b = same.build, changed.build
    changed_on_a = _crossed(prober, changed, a, level)
    four = [PairProbe(same.commit, a.jaxlib, old.value, laid=alone_note(same)),
            PairProbe(changed.commit, b.jaxlib, new.value, laid=alone_note(changed))]
    if changed_on_a is not None and changed_on_a[1] is not old:
        why = (f"commit {changed.short} gave {changed_on_a[1].value} on jaxlib {a.jaxlib} as on jaxlib {b.jaxlib}: "
               "the Python made the change, on either build")
        return TieBreak("python", changed_on_a[0], a, b, changed_on_a[1], why,
                        evidence=(*four, as_probe(changed, a, changed_on_a)))
    same_on_b = _crossed(prober, same, b, level)
    if same_on_b is not None and same_on_b[1] is old:
        gates = version_gates(prober.subject.history, changed.commit)
        on_a = (f"gave {old.value} on jaxlib {a.jaxlib} as well" if changed_on_a is not None
                else f"cannot run on jaxlib {a.jaxlib}")
        why = (f"{same.short} gave {old.value} on jaxlib {b.jaxlib} too, so on that build {changed.short} made the "
               f"change; {changed.short} {on_a}" + (f"; its diff gates on {', '.join(gates)}" if gates else ""))
        kind = "build-dependent" if changed_on_a is not None else "python"
        return TieBreak(kind, same_on_b[0], a, b, same_on_b[1], why, gates=tuple(gates),
                        evidence=(*four, as_probe(changed, a, changed_on_a), as_probe(same, b, same_on_b)))
    changed_on_a = changed_on_a or _crossed(prober, changed, a, level, forced=True)
    same_on_b = same_on_b or _crossed(prober, same, b, level, forced=True)
    evidence = (*four, as_probe(changed, a, changed_on_a), as_probe(same, b, same_on_b))
    return _four_probes(same, changed, a, b, old, changed_on_a, same_on_b, evidence)


def _four_probes(same: CommitCandidate, changed: CommitCandidate, a: Build, b: Build, old: ProbeOutcome,
                 changed_on_a: Crossed, same_on_b: Crossed, evidence: tuple[PairProbe, ...]) -> TieBreak:
    """"binary" where each side's Python gave the old outcome on A and the new one on B; else the range.

    Where only the parent's Python gave the new outcome on B (the changed commit cannot run on A even
    forced), the "binary" is provisional: the caller asks B alone first (a Python change on B may be
    found there), and `binary_only_from_four` takes the binary back if nothing else decided it.
    """
    if same_on_b is not None and same_on_b[1] is not old and changed_on_a is None:
        why = (f"the same Python ({same.short}) gave {old.value} on jaxlib {a.jaxlib} and {same_on_b[1].value} on "
               f"jaxlib {b.jaxlib}" + (" (forced past JAX's version check)" if same_on_b[0].forced else "")
               + f"; {changed.short} could not run on jaxlib {a.jaxlib} even forced")
        return TieBreak("binary", same_on_b[0], a, b, same_on_b[1], why, evidence=evidence)
    if changed_on_a is not None and same_on_b is not None:
        if changed_on_a[1] is old and same_on_b[1] is not old:
            forced = " (forced past JAX's version check where it refused)" if \
                changed_on_a[0].forced or same_on_b[0].forced else ""
            alone = (" (where jax/ alone was laid, with that build's own jaxlib Python: the jaxlib release, "
                     "binary and Python, is what differs)") if any(p.laid for p in evidence) else ""
            why = (f"each side's Python ran on both builds{forced}: {same.short} and {changed.short} gave "
                   f"{old.value} on jaxlib {a.jaxlib} and {same_on_b[1].value} on jaxlib {b.jaxlib}: the outcome "
                   f"follows the jaxlib build, not JAX's Python{alone}")
            return TieBreak("binary", same_on_b[0], a, b, same_on_b[1], why, evidence=evidence)
        why = (f"the outcome changed where the probes switched from jaxlib {a.jaxlib} ({same.short}) to jaxlib "
               f"{b.jaxlib} ({changed.short}); on the other's build, forced, {changed.short} gave "
               f"{changed_on_a[1].value} and {same.short} {same_on_b[1].value}: neither the build nor the Python "
               "alone made it (a forced probe is a lead, never an answer alone)")
        return TieBreak("unknown", None, a, b, None, why, evidence=evidence)
    missing = " and ".join(f"{c.short} on jaxlib {build.jaxlib}" for c, build, got in
                           ((changed, a, changed_on_a), (same, b, same_on_b)) if got is None)
    why = (f"the outcome changed where the probes switched from jaxlib {a.jaxlib} ({same.short}) to jaxlib "
           f"{b.jaxlib} ({changed.short}), and {missing} gave no verdict even forced (the check was inconclusive "
           "there, or JAX did not run: the probe table says which): without both sides' Python on both builds, "
           "neither the binary nor a commit is named")
    return TieBreak("unknown", None, a, b, None, why, evidence=evidence)


def as_probe(commit: CommitCandidate, build: Build, crossed: Crossed) -> PairProbe:
    """A crossed probe as the report prints it: its outcome (forced, where it was), or why it did not run."""
    if crossed is not None:
        return PairProbe(commit.commit, build.jaxlib, crossed[1].value, forced=crossed[0].forced,
                         laid=alone_note(crossed[0]))
    if on_build(commit, build) is None:
        return PairProbe(commit.commit, build.jaxlib, f"could not run: JAX refuses jaxlib {build.jaxlib}: its "
                                                      f"jax/version.py accepts {commit.accepts}")
    # Not "could not run": a check that was inconclusive there is the check's answer (issue 58), and the probe table
    # says which of the two it was.
    return PairProbe(commit.commit, build.jaxlib, "no verdict: the check was inconclusive there, or JAX itself did "
                                                  "not run (the probe table says which)")


def _crossed(prober: CommitProber, commit: CommitCandidate, build: Build, level: CommitLevel,
             forced: bool = False) -> Crossed:
    """``commit`` run on ``build`` (forced: past JAX's version check, either way); None where JAX does not run it.

    The smallest overlay that runs, as the search's spans are found (`LAID_FORMS`): where the commit's jaxlib
    Python cannot run on the other binary, its ``jax/`` alone over that build's own jaxlib. (jax#39103 between
    0.10.1 and 0.10.2: 0d099df3ed's jaxlib Python names ``_jax.PrimitiveType``, which jaxlib 0.10.2's binary
    no longer has, so its side of the four probes could not run and no verdict was given.)
    """
    moved = forced_on(commit, build, below_minimum=True) if forced else on_build(commit, build)
    if moved is None:
        return None
    for laid in LAID_FORMS[LAID_FORMS.index(moved.laid):]:
        tried = moved if laid == moved.laid else dataclasses.replace(
            moved, laid=laid, version=f"{moved.version}-{laid.replace('/', '').replace(' ', '-')}")
        prober.subject.add(tried)
        outcome = level.outcomes.get(tried.version) or prober(tried.version)
        level.outcomes[tried.version] = outcome
        if outcome is not ProbeOutcome.SKIP:
            return tried, outcome
    return None


def binary_only_from_four(tie: TieBreak, changed: CommitCandidate, a: Build, old: ProbeOutcome) -> TieBreak:
    """A "binary" that still lacks the changed side's Python on the older build becomes the range (unknown)."""
    ran = [p for p in tie.evidence if p.commit == changed.commit and p.jaxlib == a.jaxlib and p.outcome == old.value]
    if tie.kind != "binary" or ran:
        return tie
    return dataclasses.replace(tie, kind="unknown", probe=None, why=(
        f"{tie.why}: without both sides' Python on both builds, neither the binary nor a commit is named"))
