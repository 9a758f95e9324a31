"""One probe: turn a release into an outcome, from what is known or from a run.

Known first, and only under the same identity (`kit.records.identity`: what
ran, the release, every installed package, the hardware, the JAX/XLA
variables set): the probe cache (any earlier bisect's probe), then, for a
check, a current record of the matrix. What a release installs is read from
its environment's lock when it was built, so a known probe costs no resolve;
otherwise the release is resolved and its environment built or reused (once
per bisect) and asked again. Then the check runs through the runner, the one
route for a check and for a ``--script`` (which runs as a check block with
that script would, its records kept in ``reports/bisect/script-records/``),
its whole output kept beside the probe file. Either way the result is an
:class:`~kit.bisect.outcomes.Observation`, kept in the probe cache at once,
and :func:`~kit.bisect.outcomes.classify` says what it counts as.
"""

from __future__ import annotations

import dataclasses
import shlex
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Mapping, Sequence

from repro.parameters import to_flags

from .. import records
from ..config import Matrix
from ..errors import ArchiveUnreachable
from ..install.environment import Environment, Prepared
from ..install.index import PackageIndex
from ..install.release import locked_release
from ..records import Identity
from ..run import runner
from ..run.facts import identity_here, job_facts, job_label
from .candidates import Candidate
from .options import Log, Options
from .outcomes import Observation, classify, describe, observation_of, settle
from .probe_cache import ProbeCache, probe_overrides, timed_identity
from .probe_output import output_tail, project_path
from .search import Outcome


class Prober:
    """Turns a release into an outcome; remembers every observation it made or found."""

    def __init__(self, matrix: Matrix, options: Options, candidates: Sequence[Candidate], cache: ProbeCache,
                 subject: Mapping[str, Any], name: str, index: PackageIndex, log: Log) -> None:
        matrix = dataclasses.replace(matrix, results_dir=self.records_dir(matrix, options))
        self.matrix, self.options, self.cache, self.index, self.log = matrix, options, cache, index, log
        self.subject, self.name = subject, name
        self.candidates = {c.version: c for c in candidates}
        self.observations: dict[str, Observation] = {}
        self.ran_now: list[str] = []
        """Releases this bisect ran (not found in the cache or the records)."""
        self._prepared: dict[str, Prepared] = {}
        self._environments: dict[str, str] = {}
        """``built`` or ``reused``, per release this bisect prepared."""

    def records_dir(self, matrix: Matrix, options: Options) -> Path:
        """Where this prober's check records go, given the matrix as configured."""
        # A --script's records stay out of the matrix's folder: it is no check of it.
        return script_records_dir(matrix) if options.script is not None else matrix.results_dir

    @property
    def timeout(self) -> int:
        if self.options.timeout:
            return self.options.timeout
        return runner.check_for(self.matrix, self._request(None)).timeout_s

    def __call__(self, version: str) -> Outcome:
        observation = self.observe(self.candidates[version])
        self.observations[version] = observation
        result = classify(observation, self.options.crash)
        self.log(probe_line(self.name_of(version), observation, result, self.options))
        return result

    def name_of(self, version: str) -> str:
        """How a log line names what is probed: ``jax 0.5.3``, or a commit and its build (`commit_probes`)."""
        return f"jax {version}"

    def observe(self, candidate: Candidate) -> Observation:
        """What the release does: known already under this identity, or measured now (and then remembered)."""
        if candidate.yanked is not None:
            return Observation("yanked", None, f"yanked from the index ({candidate.yanked}): not probed", "index")
        if candidate.problem:
            return Observation("not-installable", None, f"not installable here: {candidate.problem}", "index",
                               jaxlib=candidate.jaxlib)
        locked = self.locked_identity(candidate.version)
        known, recorded = self.known(locked, candidate.version) if locked is not None else (None, None)
        if known is not None:
            return known
        started = time.monotonic()
        try:
            prepared = self._prepare(candidate.version)
        except ArchiveUnreachable as unknown:  # the index is fine: one release unknown, the others still testable
            return install_unknown(unknown, candidate)
        here = self.identity(candidate.version, prepared)
        if locked is None or here.digest() != locked.digest():
            known, recorded = self.known(here, candidate.version)  # the resolver answered otherwise than the lock
            if known is not None:
                return known
        observation = dataclasses.replace(
            self._looks(candidate, prepared, here, recorded), timeout_s=self.timeout,
            environment=self._environments.get(candidate.version), seconds=round(time.monotonic() - started, 1),
            by=self.name, ran_at=datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
            not_reused=self.cache.why_not(here), job=job_label(job_facts()), **_installed(here),
            pins=list(self.options.pins))
        if observation.jax_cannot_run is None and (prepared.environment is not None or prepared.resolution is None):
            # Resolved but not built is an install that failed here (a build, a disk, a download):
            # worth another try, not a fact about the release to keep. Nor is a run where JAX itself
            # could not import (a damaged environment, a corrupt bytecode file): it showed no behaviour.
            self.cache.put(here, observation)
        self.ran_now.append(candidate.version)
        return observation

    def known_outcomes(self) -> dict[str, Outcome]:
        """What the probe cache already says about these candidates, as the search's starting cache.

        Handed to the search before it starts, so it narrows straight to the
        known change instead of picking midpoints it would then have to run.
        Only releases whose environment was built here can be known this way
        (their lock says what they install); the others are asked when probed.
        """
        known: dict[str, Outcome] = {}
        for candidate in self.candidates.values():
            if candidate.yanked is not None or candidate.problem:
                continue
            identity = self.locked_identity(candidate.version)
            cached = self._cached(identity) if identity is not None else None
            if cached is not None:
                self.observations[candidate.version] = cached
                known[candidate.version] = classify(cached, self.options.crash)
        return known

    def ruled_out(self) -> dict[str, Outcome]:
        """The candidates the index's metadata already rules out (yanked, or no wheels here): skips, known at once.

        Handed to the search too, so a round of ``--jobs K`` never spends a
        place on a release that needs no probe.
        """
        ruled: dict[str, Outcome] = {}
        for candidate in self.candidates.values():
            if candidate.yanked is not None or candidate.problem:
                # The release prober's answer from the metadata alone (a metric prober's observe would measure).
                self.observations[candidate.version] = Prober.observe(self, candidate)
                ruled[candidate.version] = classify(self.observations[candidate.version], self.options.crash)
        return ruled

    # -- identity

    def identity(self, version: str, prepared: Prepared) -> Identity:
        """This probe's identity, in the environment prepared for it."""
        return runner.prepared_identity(self.subject, version, self.options.backend, prepared)

    def environment_of(self, version: str) -> Environment | None:
        """The environment this bisect prepared for ``version``; None when it prepared none (or could not)."""
        prepared = self._prepared.get(version)
        return prepared.environment if prepared is not None else None

    def requires(self, version: str) -> tuple[str, ...]:
        """The extra packages this probe's check installs with the release (its ``requires``, ``--requires``)."""
        return runner.check_for(self.matrix, self._request(version)).requires

    def locked_identity(self, version: str) -> Identity | None:
        """This probe's identity from the lock of the release's built environment; None when it was never built."""
        locked = locked_release(self.matrix, version, self.options.backend, self.options.find_links, self.options.pins,
                                self.requires(version))
        if locked is None or locked.resolution is None:
            return None
        return identity_here(subject=self.subject, jax=version, backend=self.options.backend,
                             python=locked.resolution.python, packages=locked.resolution.pins,
                             requirements=locked.plan.requirements, exclude_newer=locked.plan.exclude_newer)

    def known(self, identity: Identity, version: str) -> tuple[Observation | None, Observation | None]:
        """(the answer, if this identity's is known; a current but inconclusive record, to start from).

        Known: an earlier probe of this identity (settled when it was made), or
        (a check) a current record of it that is conclusive. An inconclusive
        record is a first look: the probe runs once more before it counts.
        """
        cached = self._cached(identity)
        if cached is not None:
            return cached, None
        recorded = self._record_observation(identity, version)
        if recorded is not None and recorded.verdict != "inconclusive":
            return recorded, None
        return None, recorded

    def _cached(self, identity: Identity) -> Observation | None:
        cached = self.cache.get(identity, self.timeout)
        if cached is None:
            return None
        # Why that probe had once been run afresh is its own story, not this run's; the job is the one that looked.
        return dataclasses.replace(cached, source="cache", matched=records.summary(identity), not_reused="",
                                   job=job_label(job_facts()), pins=list(self.options.pins))

    def _looks(self, candidate: Candidate, prepared: Prepared, here: Identity,
               first: Observation | None) -> Observation:
        """Look once (or start from an inconclusive record); re-run a check's inconclusive look; confirm on request.

        Every look's output goes to the probe's log, in order.
        """
        log_file = self.cache.log_path(here)
        log_file.parent.mkdir(parents=True, exist_ok=True)
        log_file.unlink(missing_ok=True)  # this identity's earlier log, if its probe is being redone (--fresh)
        runs = [first or self._run(candidate, prepared, log_file)]
        if (runs[0].verdict == "inconclusive" and self.options.check and not runs[0].exception
                and not runs[0].jax_cannot_run):
            # An inconclusive check is re-run once before it counts; a script that died of another
            # exception (an import, a failure bad_if does not match) would only die of it again.
            runs.append(self._run(candidate, prepared, log_file))
        if runs[-1].verdict in ("affected", "unaffected"):
            runs += [self._run(candidate, prepared, log_file) for _ in range(self.options.confirm)]
        if not log_file.exists():
            return settle(runs)
        return dataclasses.replace(settle(runs), output_tail=output_tail(log_file),
                                   log=project_path(log_file, self.matrix))

    # -- records

    def _record_observation(self, here: Identity, version: str) -> Observation | None:
        if not self.options.check or not self.cache.read:
            return None
        # Read afresh for every probe: a sweep running alongside may have just measured this release.
        here = timed_identity(here, self.matrix, self.options)  # a record with timings answers an untimed probe
        parameters = dict(here.subject.get("parameters") or {})
        newest = records.newest_records_here(self.matrix.results_dir, self.options.backend,
                                             {self.options.check: parameters}, self.options.preset)
        record = newest.get((self.options.check, version))
        if record is None or not records.is_current(record, here):
            return None
        evidence = record.get("evidence") or {}
        return dataclasses.replace(
            observation_of(record, "record"), ran_at=str(record.get("created") or ""),
            seconds=float(record.get("duration_s") or 0), matched=records.summary(here),
            output_tail=list(evidence.get("output_tail") or []), job=job_label(record.get("slurm")),
            **_installed(here), pins=list(self.options.pins))

    # -- runs

    def _request(self, version: str | None, log_file: Path | None = None) -> runner.RunRequest:
        """What the runner is asked for ``version`` (None: the check alone, as `timeout` asks)."""
        candidate = self.candidates.get(version) if version is not None else None
        return runner.RunRequest(check=self.options.subject, version=version or "", script=self.options.script_check,
                                 backend=self.options.backend, preset=self.options.preset,
                                 find_links=self.options.find_links, timeout_s=self.options.timeout,
                                 reproduce=reproduce_command(self.matrix, self.options, version or ""),
                                 first_python=candidate.python if candidate is not None else None,
                                 output_log=log_file, pins=self.options.pins,
                                 overrides=probe_overrides(self.matrix, self.options),
                                 echo=self.options.verbose)  # quiet: the output is in the probe's log

    def _prepare(self, version: str) -> Prepared:
        """The release resolved and its environment built or reused, at most once per bisect."""
        if version not in self._prepared:
            prepared = runner.prepare(self.matrix, self._request(version), self.log, self.index)
            if prepared.environment is not None:
                self._environments[version] = prepared.environment.obtained
            self._prepared[version] = prepared
        return self._prepared[version]

    def _run(self, candidate: Candidate, prepared: Prepared, log_file: Path) -> Observation:
        """One run through the runner, which writes its record; what the record says."""
        log_file.parent.mkdir(parents=True, exist_ok=True)
        record, _path = runner.run_check(self.matrix, self._request(candidate.version, log_file), self.log,
                                         self.index, prepared=prepared)
        return observation_of(record)


def install_unknown(unknown: ArchiveUnreachable, candidate: Candidate) -> Observation:
    """A release whose jaxlib only an unreachable archive might hold: skipped, named, never kept as a fact."""
    return Observation("unreachable", None, f"installability unknown here: {unknown}", "index", jaxlib=candidate.jaxlib)


def script_records_dir(matrix: Matrix) -> Path:
    """Where the records of ``--script`` probes go: beside the probe cache, not among the matrix's records."""
    return matrix.results_dir.parent / "bisect" / "script-records"


def _installed(identity: Identity) -> dict[str, Any]:
    """The observation's account of what was installed: every package and the era cut-off."""
    return {"python": identity.python, "jaxlib": identity.packages.get("jaxlib"), "packages": dict(identity.packages),
            "era": identity.install.get("exclude_newer")}


def reproduce_command(matrix: Matrix, options: Options, version: str) -> str:
    """A command that reruns one probe's check as written: a nox session where matrix.toml has one.

    A ``--script`` has no command of its own for one release: the bisect that ran it reruns it.
    """
    if not options.check:
        return f"nox -s bisect -- {shlex.join(options.argv)}"
    untimed = " ".join(to_flags(probe_overrides(matrix, options)))  # the run as the probe made it
    if options.check and any(release.version == version for release in matrix.releases):
        return f"nox -s {options.check}-{version}" + (f" -- {untimed}" if untimed else "")
    flags = f" --backend {options.backend}" if options.backend != "cpu" else ""
    flags += f" --preset {options.preset}" if options.preset else ""
    flags += f" {untimed}" if untimed else ""
    return f"python -m kit run {options.check or 'script'} {version}{flags}"


def probe_line(name: str, observation: Observation, result: Outcome, options: Options) -> str:
    """One line per probe: the outcome, where it came from, what was held, and why it was (not) reused."""
    flip = f" — flipped: {' → '.join(observation.runs)}" if observation.flipped else ""
    held = f" (holding {', '.join(observation.pins)})" if observation.pins else ""
    extras = f" · {observation.details}" if observation.details else ""
    line = f"probe {name}{held}: {describe(result, bool(options.script))} [{observation.source}" \
           + (f", {observation.job}" if observation.job else "") + f"] {observation.reason}{extras}{flip}"
    if observation.matched:
        line += f"\n  reused: the same {observation.matched}"
    if observation.not_reused:
        line += f"\n  ran again: {observation.not_reused}"
    return line
