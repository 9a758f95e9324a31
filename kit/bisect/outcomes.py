"""The one place what a release did becomes good / bad / skip, and the words for it.

An :class:`~kit.bisect.observation.Observation` is the raw fact (a record's
status and verdict, a script's exit code read the ``git bisect run`` way);
:func:`observation_of` reads one from a record, :func:`settle` makes one of
several looks, and :func:`classify` maps it
to the search's :class:`~kit.bisect.search.ProbeOutcome`. Every rule about what
counts as good, bad or skip lives in that one function, so a new kind of
evidence (a measured metric) adds a branch there and nowhere else: a metric's
step decision is told as the verdict it stands for (:func:`metric_verdict`),
and a record's verdict read as evidence for a tip is classified by the same
rule (:func:`recorded_outcomes`).
"""

from __future__ import annotations

from typing import Mapping, Sequence

from .. import metrics

from repro.compile_cache import summary as compile_summary

from ..records import Record
from ..records import Source, Status, Verdict
from ..json_types import as_object
from .observation import CameFrom, Cost, Found, Installed, Observation
from .search import ProbeOutcome

CRASH_MODES = {"skip": ProbeOutcome.SKIP, "bad": ProbeOutcome.BAD, "good": ProbeOutcome.GOOD}


def observation_of(record: Record, source: Source = Source.RUN) -> Observation:
    """What a record says a release did: its status, verdict and reason, and how a failure ended.

    One reading for a record the probe just wrote and one found current in
    the matrix's folder, so both show the same in a probe line and a report.
    """
    evidence = record.evidence
    exception = _mapping(evidence.get("exception"))
    imported = _mapping(evidence.get("import_error"))
    extras = _mapping(record.environment.get("packages"))
    jax_failed = _mapping(evidence.get("jax_cannot_run"))
    found = Found(
        Status(record.status_text), record.verdict, record.reason,
        exception=f"{exception.get('type')}: {exception.get('message', '')}".splitlines()[0] if exception else None,
        missing_import=str(imported["package"]) if imported.get("package") and not imported.get("installed") else None,
        jax_cannot_run=str(jax_failed.get("error") or "JAX could not run") if jax_failed else None,
        kit_files_changed=bool(evidence.get("kit_files_changed")))
    compiles = compile_summary(dict(_mapping(evidence.get("compile_cache")))) if evidence.get("compile_cache") else ""
    return Observation(found, CameFrom(source), Cost(compiles=compiles),
                       Installed(extra_packages={str(k): (str(v) if v is not None else None) for k, v in extras.items()}))


def _mapping(value: object) -> Mapping[str, object]:
    """A record's sub-object, or an empty one where a record (anyone can edit it) holds something else."""
    return as_object(value)


def classify(observation: Observation, crash: str) -> ProbeOutcome:
    """Map one observation to the search's outcome.

    unaffected → GOOD, affected → BAD, inconclusive (a check's, after its
    re-run, or a script's 125) → SKIP, not installable or yanked → SKIP,
    crashed or timed out → as ``--crash`` says.
    """
    found = observation.found
    if found.status in (Status.CRASHED, Status.TIMED_OUT):
        return CRASH_MODES[crash]
    if found.status != Status.RAN:
        return ProbeOutcome.SKIP
    return _of_verdict(Verdict.of(found.verdict))


def _of_verdict(verdict: Verdict | None) -> ProbeOutcome:
    """A verdict that ran: unaffected → GOOD, affected → BAD, anything else (inconclusive, none) → SKIP."""
    return ProbeOutcome.GOOD if verdict is Verdict.UNAFFECTED else ProbeOutcome.BAD if verdict is Verdict.AFFECTED else ProbeOutcome.SKIP


def recorded_outcomes(verdicts: Mapping[str, str]) -> dict[str, ProbeOutcome]:
    """Records' verdicts, by release, as the outcomes `classify` gives a run with that verdict; a verdict that
    decides nothing (inconclusive, unknown) says nothing here (it is left out, not counted a skip)."""
    told = {version: _of_verdict(Verdict.of(verdict)) for version, verdict in verdicts.items()}
    return {version: outcome for version, outcome in told.items() if outcome is not ProbeOutcome.SKIP}


def metric_verdict(call: metrics.Call) -> Verdict:
    """A metric probe's step decision as its verdict (a step: affected; none: unaffected; within noise:
    inconclusive), so `classify` maps it like any other run's."""
    return _METRIC_VERDICTS[call]


_METRIC_VERDICTS = {metrics.Call.BAD: Verdict.AFFECTED, metrics.Call.GOOD: Verdict.UNAFFECTED,
                    metrics.Call.UNDECIDED: Verdict.INCONCLUSIVE}


def settle(runs: Sequence[Observation]) -> Observation:
    """One observation from several looks at the same release.

    The first conclusive look counts; later looks (``--confirm``) must agree
    with it, or the release is noisy: reported as flipped, and skipped.
    """
    settled = _settled(runs)
    # The kit's files changing during any look puts the whole probe in doubt (it is not kept).
    return settled.with_found(kit_files_changed=True) if any(r.found.kit_files_changed for r in runs) else settled


def _settled(runs: Sequence[Observation]) -> Observation:
    labels = [r.found.verdict or r.found.status for r in runs]
    steps = tuple(dict.fromkeys(step for r in runs for step in r.came_from.steps))  # (record, run): a record, then a re-run
    conclusive = [r for r in runs if r.found.verdict in (Verdict.AFFECTED, Verdict.UNAFFECTED)]
    if not conclusive:
        last = runs[-1]
        return _told(last, last.found.status, last.found.verdict, last.found.reason, steps,
                     labels if len(runs) > 1 else [])
    counted = conclusive[0]
    if any(r.found.verdict != counted.found.verdict for r in conclusive[1:]):
        reason = f"the verdict changed between runs ({', '.join(labels)}): too noisy to count"
        return _told(counted, Status.RAN, Verdict.INCONCLUSIVE, reason, steps, labels, flipped=True)
    flipped = len(runs) > 1 and runs[0].found.verdict == Verdict.INCONCLUSIVE
    return _told(counted, counted.found.status, counted.found.verdict, counted.found.reason, steps,
                 labels if len(runs) > 1 else [], flipped)


def _told(run: Observation, status: Status, verdict: str | None, reason: str, steps: tuple[Source, ...], runs: list[str],
          flipped: bool = False) -> Observation:
    """The settled observation, keeping what the run it rests on showed (its exception, its extra packages, the
    compiles it reused); where it came from, what it cost and the rest of what was installed are the caller's."""
    found = run.found
    return Observation(
        Found(status, verdict, reason, runs, flipped, exception=found.exception, missing_import=found.missing_import,
              jax_cannot_run=found.jax_cannot_run, kit_files_changed=found.kit_files_changed),
        CameFrom(steps[-1], earlier=steps[:-1]), Cost(compiles=run.cost.compiles),
        Installed(extra_packages=dict(run.installed.extra_packages)))


def label(outcome: ProbeOutcome, observation: Observation, crash: str, script: bool) -> str:
    """The outcome with why, for the probes table: a timeout or a crash never reads as a plain bad."""
    counted = f"counted {outcome.value} by --crash {crash}"
    found = observation.found
    if found.status == Status.TIMED_OUT:
        return f"timed out after {observation.cost.timeout_s} s, {counted}"
    if found.status == Status.CRASHED:
        return f"crashed, {counted}"
    if found.jax_cannot_run:
        return f"skip (JAX itself cannot run here: {found.jax_cannot_run})"
    if found.status != Status.RAN:
        return f"skip ({found.status.replace('-', ' ')})"
    if found.flipped and outcome is ProbeOutcome.SKIP:
        return "skip (flipped between runs)"
    if outcome is ProbeOutcome.SKIP:
        if found.missing_import:
            return f"skip (could not import {found.missing_import})"
        if found.exception:
            return f"skip (failed otherwise: {found.exception.split(':', 1)[0]})"
        return "skip (exit 125)" if script and found.verdict == Verdict.INCONCLUSIVE else f"skip ({found.verdict})"
    return describe(outcome, script)


def describe(outcome: ProbeOutcome, script: bool) -> str:
    """The outcome in the user's words: a check's verdict is named too."""
    if outcome is ProbeOutcome.SKIP:
        return "skip"
    if script:
        return str(outcome.value)
    return {ProbeOutcome.GOOD: "good (unaffected)", ProbeOutcome.BAD: "bad (affected)"}[outcome]
