"""How a probe is judged by what its run says: a check's verdict, or a script's exit code.

Known first, and only under the same identity (`kit.records.identity`: what
ran, the release or commit, every installed package, the hardware, the
JAX/XLA variables set): the probe cache (any earlier bisect's probe), then,
for a check, a current record of the matrix. Otherwise the subject is
prepared and run through the runner, the one route for a check and for a
``--script``, its whole output kept beside the probe file. An inconclusive
check is re-run once; ``--confirm N`` runs a decided probe N more times.
Either way the result is an :class:`~kit.bisect.outcomes.Observation`, kept
in the probe cache at once. (``--metric`` has its own judge: :mod:`kit.bisect.probe.metric`.)
"""

from __future__ import annotations

import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Mapping, Sequence, TypedDict

from ...records import Source, Verdict
from ... import records
from ...config import Matrix
from ...errors import ArchiveUnreachable
from ...install import PackageIndex, Prepared
from ...log_events import Log
from ...records import Identity
from ...json_types import as_text
from ...run.facts import job_facts, job_label
from ...user_paths import shown_path
from ..bounds import Bounds
from ..candidates import Candidate
from .given import GivenProbe, taken, why_not_taken
from ..specs import Specs, WhatRuns
from ..observation import Observation
from ..outcomes import describe, observation_of, settle
from .cache import ProbeCache
from .output import output_tail
from .probes import Judge, Look, Prober, Subject, install_unknown
from .release_subject import ReleaseSubject
from ..run_spec import RunSpec
from ..search import ProbeOutcome
from .metric_summary import MetricSummary


def release_prober(matrix: Matrix, specs: Specs, spec: RunSpec, candidates: Sequence[Candidate],
                   cache: ProbeCache, name: str, index: PackageIndex, log: Log, judge: Judge | None = None,
                   given: Mapping[str, GivenProbe] | None = None) -> Prober[ReleaseSubject]:
    """Releases run as ``spec`` says, judged by verdict (or by ``judge``, e.g. a metric's); ``given``: runs made
    before the bisect, by release, taken where they answer a probe (kit/bisect/probe/given.py); ``specs``: the
    driver's split of the command line, each part handed to what reads it."""
    subject = ReleaseSubject(matrix, spec, specs.report, candidates, index, log)
    judge = judge or VerdictJudge(specs.runs, specs.search.confirm, cache, name, matrix.path.parent, spec.pins, given)
    return Prober(subject, judge, specs.search.crash, log)


class VerdictJudge:
    """Good or bad by the run's verdict (a script's by its exit code), remembered in the probe cache."""

    def __init__(self, runs: WhatRuns, confirm: int, cache: ProbeCache, name: str, project: Path,
                 pins: tuple[str, ...] = (), given: Mapping[str, GivenProbe] | None = None) -> None:
        self.runs, self.confirm, self.cache, self.name, self.project = runs, confirm, cache, name, project
        """``confirm``: how many more runs a clear verdict gets (``--confirm``); a flip makes it a skip."""
        self.pins = list(pins)
        """The packages the run spec holds (``--pin``), which each observation names."""
        self.given = dict(given or {})
        """Runs made before the bisect (triage's), by release: taken where one answers the probe, never cached."""

    def start(self, subject: Subject, bounds: Bounds) -> dict[str, Look]:
        """Nothing to set up: a verdict needs no baseline."""
        return {}

    def summary(self, observations: Mapping[str, Observation]) -> MetricSummary | None:
        """Nothing beyond the outcomes to report."""
        return None

    def line(self, name: str, observation: Observation, result: ProbeOutcome) -> str:
        return probe_line(name, observation, result, self.runs.script is not None)

    def observe(self, subject: Subject, candidate: Candidate) -> Look:
        """What the candidate does: known already under this identity, or measured now (and then remembered)."""
        key = candidate.version
        locked = subject.locked_identity(key)
        known, recorded = self.known(subject, locked, key) if locked is not None else (None, None)
        known = known or (self._handed(key, locked) if locked is not None else None)
        if known is not None:
            return Look(known, False)
        started = time.monotonic()
        try:
            prepared = subject.prepare(key)
        except ArchiveUnreachable as unknown:  # the index is fine: one release unknown, the others still testable
            return Look(install_unknown(unknown, candidate), False)
        here = subject.identity(key, prepared)
        if locked is None or here.digest() != locked.digest():
            known, recorded = self.known(subject, here, key)  # the resolver answered otherwise than the lock
            known = known or self._handed(key, here)
            if known is not None:
                return Look(known, False)
        observation = self._looks(subject, key, prepared, here, recorded).with_came_from(
            by=self.name, ran_at=datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
            not_reused=self._why_probed(here, key), job=job_label(job_facts())).with_cost(
            timeout_s=subject.timeout, seconds=round(time.monotonic() - started, 1)).with_installed(
            environment=subject.environment_state(key), **_installed(here), pins=list(self.pins))
        if observation.found.jax_cannot_run is None and not observation.found.kit_files_changed and (
                prepared.environment is not None or prepared.resolution is None):
            # Resolved but not built is an install that failed here (a build, a disk, a download):
            # worth another try, not a fact about the release to keep. Nor is a run where JAX itself
            # could not import (a damaged environment, a corrupt bytecode file): it showed no behaviour.
            # Nor one during which the kit's own files changed: its verdict is not trusted.
            self.cache.put(here, observation)
        return Look(observation, True)

    def _handed(self, key: str, identity: Identity) -> Observation | None:
        """The run handed to this bisect for ``key``, where it answers a probe of ``identity`` (None: probe it)."""
        given = self.given.get(key)
        seen = taken(given, identity) if given is not None else None
        return seen.with_installed(pins=list(self.pins)) if seen is not None else None

    def _why_probed(self, here: Identity, key: str) -> str:
        """Why an earlier probe, or a run handed to this bisect, did not answer this one ("" when none existed)."""
        given = self.given.get(key)
        handed = f"triage's run was not taken: {why_not_taken(given, here)}" if given is not None else ""
        return "; ".join(filter(None, [self.cache.why_not(here), handed]))

    def remembered(self, subject: Subject, key: str) -> Observation | None:
        """An earlier probe of this candidate, where its built environment's lock says what it installs."""
        identity = subject.locked_identity(key)
        return self._cached(identity, subject.timeout) if identity is not None else None

    def known(self, subject: Subject, identity: Identity, key: str) -> tuple[Observation | None, Observation | None]:
        """(the answer, if this identity's is known; a current but inconclusive record, to start from).

        Known: an earlier probe of this identity (settled when it was made), or
        (a check) a current record of it that is conclusive. An inconclusive
        record is a first look: the probe runs once more before it counts.
        """
        cached = self._cached(identity, subject.timeout)
        if cached is not None:
            return cached, None
        recorded = subject.recorded(identity, key) if self.cache.read else None
        if recorded is not None:
            recorded = recorded.with_installed(**_installed(identity), pins=list(self.pins))
        if recorded is not None and recorded.found.verdict != Verdict.INCONCLUSIVE:
            return recorded, None
        return None, recorded

    def _cached(self, identity: Identity, timeout: int) -> Observation | None:
        cached = self.cache.get(identity, timeout)
        if cached is None:
            return None
        # Why that probe had once been run afresh is its own story, not this run's; the job is the one that looked.
        return cached.with_came_from(source=Source.CACHE, matched=records.summary(identity), not_reused="",
                                     job=job_label(job_facts())).with_installed(pins=list(self.pins))

    def _looks(self, subject: Subject, key: str, prepared: Prepared, here: Identity,
               first: Observation | None) -> Observation:
        """Look once (or start from an inconclusive record); re-run a check's inconclusive look; confirm on request.

        Every look's output goes to the probe's log, in order.
        """
        log_file = self.cache.log_path(here)
        log_file.parent.mkdir(parents=True, exist_ok=True)
        log_file.unlink(missing_ok=True)  # this identity's earlier log, if its probe is being redone (--fresh)

        def run() -> Observation:
            log_file.parent.mkdir(parents=True, exist_ok=True)
            return observation_of(subject.run(key, prepared, log_file))

        runs = [first or run()]
        if (runs[0].found.verdict == Verdict.INCONCLUSIVE and self.runs.check and not runs[0].found.exception
                and not runs[0].found.jax_cannot_run):
            # An inconclusive check is re-run once before it counts; a script that died of another
            # exception (an import, a failure bad_if does not match) would only die of it again.
            runs.append(run())
        if runs[-1].found.verdict in (Verdict.AFFECTED, Verdict.UNAFFECTED):
            runs += [run() for _ in range(self.confirm)]
        if not log_file.exists():
            return settle(runs)
        return settle(runs).with_came_from(output_tail=output_tail(log_file), log=shown_path(log_file, self.project))


class _FromIdentity(TypedDict):
    """The part of `kit.bisect.observation.Installed` an identity says."""

    python: str | None
    jaxlib: str | None
    packages: dict[str, str]
    era: str | None


def _installed(identity: Identity) -> _FromIdentity:
    """What ``identity`` says was installed, for the observation's account: every package and the era cut-off."""
    return {"python": identity.python, "jaxlib": identity.packages.get("jaxlib"), "packages": dict(identity.packages),
            "era": as_text(identity.install.get("exclude_newer")) or None}


def probe_line(name: str, observation: Observation, result: ProbeOutcome, script: bool) -> str:
    """One line per probe: the outcome, where it came from, what was held, and why it was (not) reused (``script``:
    a ``--script``'s words, pass/fail, for good/bad)."""
    found, came, pins = observation.found, observation.came_from, observation.installed.pins
    flip = f" — flipped: {' → '.join(found.runs)}" if found.flipped else ""
    held = f" (holding {', '.join(pins)})" if pins else ""
    extras = f" · {observation.details}" if observation.details else ""
    line = f"probe {name}{held}: {describe(result, script)} [{came.shown}" \
           + (f", {came.job}" if came.job else "") + f"] {found.reason}{extras}{flip}"
    if came.matched:
        line += f"\n  reused: the same {came.matched}"
    if came.taken_from:
        line += f"\n  taken from: {came.taken_from}"
    if came.not_reused:
        line += f"\n  ran again: {came.not_reused}"
    return line
