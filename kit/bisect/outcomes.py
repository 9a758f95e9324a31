"""What one release did, and the one place that becomes good / bad / skip.

An :class:`Observation` is the raw fact (a record's status and verdict, a
script's exit code read the ``git bisect run`` way); :func:`classify` maps it
to the search's :class:`~kit.bisect.search.Outcome`. Every rule about what
counts as good, bad or skip lives in that one function, so a new kind of
evidence (a measured metric) adds a branch there and nowhere else.
"""

from __future__ import annotations

import dataclasses

from dataclasses import asdict, dataclass, field, fields
from typing import Any, Mapping, Sequence

from repro.compile_cache import summary as compile_summary

from ..records import Record
from ..records import Source, Status, Verdict, joined
from ..requirements import versions_text
from ..run import protocol
from .search import Outcome

CRASH_MODES = {"skip": Outcome.SKIP, "bad": Outcome.BAD, "good": Outcome.GOOD}


@dataclass
class Observation:
    """What one release did, before it is mapped to an outcome."""

    status: str
    """``ran``, ``not-installable``, ``crashed`` or ``timed-out``, as in a record; or ``yanked`` (not probed)."""
    verdict: str | None
    """``affected``, ``unaffected`` or ``inconclusive`` (a script's 125 too); None when it did not run."""
    reason: str
    source: str = Source.RUN
    """``run`` (measured by this bisect), ``record`` (a current record), ``cache`` (an earlier bisect's probe) or
    ``triage`` (a run triage made, judged by the check's judge: kit/bisect/probe/given.py)."""
    runs: list[str] = field(default_factory=list)
    """Each run's verdict or status, in order, when there was more than one."""
    flipped: bool = False
    environment: str | None = None
    """``built`` or ``reused`` when this probe prepared the release's environment; None when it did not."""
    samples: list[float] = field(default_factory=list)
    """``--metric``: every sample measured for this release (a metric's verdict is its step decision)."""
    python: str | None = None
    jaxlib: str | None = None
    """What it ran with (the probe cache's key)."""
    timeout_s: int | None = None
    """The time limit it ran under: a timeout is only as final as its limit."""
    seconds: float = 0.0
    """Wall time of the probe, environment included."""
    ran_at: str = ""
    """When it ran (UTC, ISO 8601)."""
    by: str = ""
    """The bisect that ran it."""
    packages: dict[str, str] = field(default_factory=dict)
    """Every package installed where it ran (the report's "what else changed")."""
    era: str | None = None
    """The era cut-off its dependencies were resolved at (uploaded no later than this)."""
    pins: list[str] = field(default_factory=list)
    """``--pin`` requirements held while it ran."""
    matched: str = ""
    """Answered without a run: why the earlier probe or record counts as this one (what their identity holds)."""
    not_reused: str = ""
    """Run although an earlier probe of the same release exists: what differed."""
    output_tail: list[str] = field(default_factory=list)
    """The last lines of its output, bounded."""
    log: str = ""
    """Its whole output, as a path relative to the project (beside its probe file)."""
    job: str = ""
    """The SLURM job that ran it (``SLURM job 12_0 on node01``), or "" for a local run."""
    exception: str | None = None
    """The exception that ended the script (``TypeError: ...``), where it died of one."""
    missing_import: str | None = None
    """A package the script could not import and the environment lacks: add it to requires."""
    extra_packages: dict[str, str | None] = field(default_factory=dict)
    """The version of each extra package (a check's ``requires``, ``--requires``) it ran with."""
    jax_cannot_run: str | None = None
    """What JAX itself died of where it was asked to import and run (`kit.run.jax_runs`): the run was no
    verdict, the probe is a skip, and it is never kept in the probe cache as an outcome."""
    kit_files_changed: bool = False
    """The kit's own files changed while it ran (`kit.run.kit_files`): no verdict, never kept in the probe cache."""
    compiles: str = ""
    """How many of the run's compiles JAX's persistent cache answered (``compile cache: 30 of 33 compiles
    reused``), or why it was not used; "" where the run does not say (a script, an older record)."""
    taken_from: str = ""
    """Answered by a run this bisect was handed (``source`` ``triage``): what ran where, how it was judged, and how
    to reproduce it, in words; "" for any other observation."""

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @property
    def details(self) -> str:
        """What the probe line adds after the reason: the extra packages' versions (``flax 0.10.1``), and how
        many compiles were reused."""
        return " · ".join(filter(None, [versions_text(self.extra_packages), self.compiles]))

    @classmethod
    def from_json(cls, data: Any) -> Observation:
        """Read back a saved observation; keys this kit does not know are dropped.

        A file anyone can edit: ValueError names the first field of the wrong shape.
        """
        if not isinstance(data, Mapping):
            raise ValueError("the observation is not a JSON object")
        known = {f.name: f for f in fields(cls)}
        for name in ("status", "verdict", "reason"):
            if name not in data:
                raise ValueError(f"the observation has no {name!r}")
        for name, value in data.items():
            if name in known and not _OBSERVATION_SHAPES[name](value):
                raise ValueError(f"the observation's {name!r} is not {known[name].type}")
        return cls(**{k: v for k, v in data.items() if k in known})


def _text_or_none(value: Any) -> bool:
    return value is None or isinstance(value, str)


def _strings(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(x, str) for x in value)


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


_OBSERVATION_SHAPES = {
    "status": lambda v: isinstance(v, str), "verdict": _text_or_none, "reason": lambda v: isinstance(v, str),
    "source": lambda v: isinstance(v, str), "runs": lambda v: isinstance(v, list) and all(isinstance(x, str) for x in v),
    "flipped": lambda v: isinstance(v, bool), "environment": _text_or_none,
    "samples": lambda v: isinstance(v, list) and all(_number(x) for x in v), "python": _text_or_none,
    "jaxlib": _text_or_none, "timeout_s": lambda v: v is None or (_number(v) and int(v) == v),
    "seconds": _number, "ran_at": lambda v: isinstance(v, str), "by": lambda v: isinstance(v, str),
    "packages": lambda v: isinstance(v, dict) and all(isinstance(x, str) for x in v.values()),
    "era": _text_or_none, "pins": _strings, "matched": lambda v: isinstance(v, str),
    "not_reused": lambda v: isinstance(v, str), "output_tail": _strings, "log": lambda v: isinstance(v, str),
    "job": lambda v: isinstance(v, str), "exception": _text_or_none, "missing_import": _text_or_none,
    "extra_packages": lambda v: isinstance(v, dict) and all(isinstance(k, str) and _text_or_none(x)
                                                            for k, x in v.items()),
    "jax_cannot_run": _text_or_none, "compiles": lambda v: isinstance(v, str),
    "kit_files_changed": lambda v: isinstance(v, bool),
    "taken_from": lambda v: isinstance(v, str),
}


def observation_of(record: Record, source: str = Source.RUN) -> Observation:
    """What a record says a release did: its status, verdict and reason, and how a failure ended.

    One reading for a record the probe just wrote and one found current in
    the matrix's folder, so both show the same in a probe line and a report.
    """
    evidence = record.evidence
    exception = _mapping(evidence.get("exception"))
    imported = _mapping(evidence.get("import_error"))
    extras = _mapping(record.environment.get("packages"))
    jax_failed = _mapping(evidence.get("jax_cannot_run"))
    return Observation(
        record.status_text, record.verdict, record.reason, source,
        exception=f"{exception.get('type')}: {exception.get('message', '')}".splitlines()[0] if exception else None,
        missing_import=str(imported["package"]) if imported.get("package") and not imported.get("installed") else None,
        extra_packages={str(k): (str(v) if v is not None else None) for k, v in extras.items()},
        jax_cannot_run=str(jax_failed.get("error") or "JAX could not run") if jax_failed else None,
        kit_files_changed=bool(evidence.get("kit_files_changed")),
        compiles=compile_summary(dict(_mapping(evidence.get("compile_cache")))) if evidence.get("compile_cache")
        else "")


def _mapping(value: Any) -> Mapping[str, Any]:
    """A record's sub-object, or an empty one where a record (anyone can edit it) holds something else."""
    return value if isinstance(value, Mapping) else {}


def classify(observation: Observation, crash: str) -> Outcome:
    """Map one observation to the search's outcome.

    unaffected → GOOD, affected → BAD, inconclusive (a check's, after its
    re-run, or a script's 125) → SKIP, not installable or yanked → SKIP,
    crashed or timed out → as ``--crash`` says.
    """
    if observation.status in (Status.CRASHED, Status.TIMED_OUT):
        return CRASH_MODES[crash]
    if observation.status != Status.RAN:
        return Outcome.SKIP
    verdict = Verdict.of(observation.verdict)
    return Outcome.GOOD if verdict is Verdict.UNAFFECTED else Outcome.BAD if verdict is Verdict.AFFECTED else Outcome.SKIP


def script_observation(code: int | None, timeout: int) -> Observation:
    """A script's exit code, as ``git bisect run`` reads it (None: it timed out); see kit.run.protocol."""
    status, verdict, reason = protocol.exit_observation(code, timeout)
    return Observation(status, verdict, reason, timeout_s=timeout)


def settle(runs: Sequence[Observation]) -> Observation:
    """One observation from several looks at the same release.

    The first conclusive look counts; later looks (``--confirm``) must agree
    with it, or the release is noisy: reported as flipped, and skipped.
    """
    settled = _settled(runs)
    # The kit's files changing during any look puts the whole probe in doubt (it is not kept).
    return dataclasses.replace(settled, kit_files_changed=True) if any(r.kit_files_changed for r in runs) else settled


def _settled(runs: Sequence[Observation]) -> Observation:
    labels = [r.verdict or r.status for r in runs]
    source = joined(r.source for r in runs)  # "record+run": a record, then a re-run
    conclusive = [r for r in runs if r.verdict in (Verdict.AFFECTED, Verdict.UNAFFECTED)]
    if not conclusive:
        last = runs[-1]
        return _told(last, last.status, last.verdict, last.reason, source, labels if len(runs) > 1 else [])
    counted = conclusive[0]
    if any(r.verdict != counted.verdict for r in conclusive[1:]):
        reason = f"the verdict changed between runs ({', '.join(labels)}): too noisy to count"
        return _told(counted, Status.RAN, Verdict.INCONCLUSIVE, reason, source, labels, flipped=True)
    flipped = len(runs) > 1 and runs[0].verdict == Verdict.INCONCLUSIVE
    return _told(counted, counted.status, counted.verdict, counted.reason, source,
                 labels if len(runs) > 1 else [], flipped)


def _told(run: Observation, status: str, verdict: str | None, reason: str, source: str, runs: list[str],
          flipped: bool = False) -> Observation:
    """The settled observation, keeping what the run it rests on showed (its exception, its extra packages, the
    compiles it reused)."""
    return Observation(status, verdict, reason, source, runs, flipped, exception=run.exception,
                       missing_import=run.missing_import, extra_packages=dict(run.extra_packages),
                       jax_cannot_run=run.jax_cannot_run, compiles=run.compiles,
                       kit_files_changed=run.kit_files_changed)


def label(outcome: Outcome, observation: Observation, crash: str, script: bool) -> str:
    """The outcome with why, for the probes table: a timeout or a crash never reads as a plain bad."""
    counted = f"counted {outcome.value} by --crash {crash}"
    if observation.status == Status.TIMED_OUT:
        return f"timed out after {observation.timeout_s} s, {counted}"
    if observation.status == Status.CRASHED:
        return f"crashed, {counted}"
    if observation.jax_cannot_run:
        return f"skip (JAX itself cannot run here: {observation.jax_cannot_run})"
    if observation.status != Status.RAN:
        return f"skip ({observation.status.replace('-', ' ')})"
    if observation.flipped and outcome is Outcome.SKIP:
        return "skip (flipped between runs)"
    if outcome is Outcome.SKIP:
        if observation.missing_import:
            return f"skip (could not import {observation.missing_import})"
        if observation.exception:
            return f"skip (failed otherwise: {observation.exception.split(':', 1)[0]})"
        return "skip (exit 125)" if script and observation.verdict == Verdict.INCONCLUSIVE else f"skip ({observation.verdict})"
    return describe(outcome, script)


def describe(outcome: Outcome, script: bool) -> str:
    """The outcome in the user's words: a check's verdict is named too."""
    if outcome is Outcome.SKIP:
        return "skip"
    if script:
        return outcome.value
    return {Outcome.GOOD: "good (unaffected)", Outcome.BAD: "bad (affected)"}[outcome]
