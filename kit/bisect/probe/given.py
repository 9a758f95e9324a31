"""Probes a bisect is handed by the command that started it: runs it did not make, each with its verdict.

``triage --run`` (kit/triage/judged_runs.py) has already run the report's block
on the releases it compared: a capture of the block, whose outcome the check it
then wrote judges with its own judge. The bisect that follows takes such a run
for a release instead of probing it, only where it is the same question:

* judged for the very check this bisect runs (its sha256, host devices and
  bad_if, as this probe's identity names what runs), and
* run in the same install this probe would run in: the release, every package,
  the Python, the backend, the hardware and the JAX/XLA variables set. Only
  what ran differs, and the observation says so (``taken_from``: the capture
  that ran, its record, the judge, the command that reruns it).

A handed run is never kept in the probe cache: that cache files a probe under
the identity of what ran, and the check itself did not run there. Where it does
not match, the release is probed as any other, and the probe says why the run
was not taken.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping, Protocol, Sequence

from ...records import Identity, Record, mismatch
from ...records import Source, Status
from ...json_types import as_text
from ..observation import Observation
from ..outcomes import observation_of
from .output import output_tail


@dataclass(frozen=True)
class GivenProbe:
    """A run made before the bisect, and the verdict the bisect's own check gives it."""

    identity: Identity
    """What ran and where: the run's own identity, as its record holds it."""
    judged_by: Mapping[str, object]
    """The check whose judge gave the verdict, as a probe's identity names what runs (`run_spec.RunSpec.subject`)."""
    observation: Observation


class HandedRun(Protocol):
    """A run as the command that started the bisect hands it over (kit/triage/judged_runs.JudgedRun)."""

    @property
    def version(self) -> str: ...

    @property
    def record(self) -> Record: ...

    @property
    def judged_by(self) -> Mapping[str, object]: ...

    @property
    def verdict(self) -> str: ...

    @property
    def reason(self) -> str: ...

    @property
    def ran(self) -> str: ...

    @property
    def log(self) -> str: ...


def given_by_release(runs: Sequence[HandedRun], project: Path) -> dict[str, GivenProbe]:
    """The handed runs as probes, by release (``log`` relative to ``project``)."""
    return {run.version: given_probe(run.record, run.judged_by, run.verdict, run.reason, run.ran, run.log, project)
            for run in runs}


def given_probe(record: Record, judged_by: Mapping[str, object], verdict: str, reason: str, ran: str,
                log: str, project: Path) -> GivenProbe:
    """The probe a record of another script's run stands for, judged ``verdict`` by the check ``judged_by``.

    ValueError where the record holds no identity (it could then match nothing honestly).
    """
    identity = Identity.from_json(record.get("identity"))
    observation = observation_of(record, Source.TRIAGE).with_found(
        status=Status.RAN, verdict=verdict, reason=reason).with_came_from(
        by="triage", ran_at=record.created, log=log, taken_from=ran,
        output_tail=output_tail(project / log) if log else []).with_cost(
        seconds=record.duration_s or 0.0).with_installed(
        python=identity.python, jaxlib=identity.packages.get("jaxlib"), packages=dict(identity.packages),
        era=as_text(identity.install.get("exclude_newer")) or None)
    return GivenProbe(identity, dict(judged_by), observation)


def why_not_taken(given: GivenProbe, here: Identity) -> str:
    """"" where ``given`` answers a probe of identity ``here``; else what differs, in words."""
    if dict(here.subject) != dict(given.judged_by):
        return "triage judged its run for another check than this bisect runs"
    return "; ".join(mismatch(dataclasses.replace(given.identity, subject=here.subject), here))


def taken(given: GivenProbe, here: Identity) -> Observation | None:
    """The handed run's observation where it answers the probe ``here`` (`why_not_taken`); else None."""
    return given.observation if not why_not_taken(given, here) else None
