"""What a release probe probes: a JAX release, its environment resolved and built once per bisect.

A *subject* (:class:`~kit.bisect.probe.probes.Subject`) says how a candidate is
prepared, what identity its probe has and where its records go; a *judge*
(:mod:`kit.bisect.probe.judges`, :mod:`kit.bisect.probe.metric`) says what the run
counts as. This is the release subject: what a release installs is read from
its environment's lock when it was built (so a known probe costs no
resolve), otherwise the release is resolved and its environment built or
reused, at most once per bisect. What each probe runs is the bisect's run
spec (`kit.bisect.run_spec`), a release's own made from it by ``replace``. A
check's records go to the matrix's folder, where the matrix reads them; a
``--script``'s to ``reports/bisect/script-records/`` (it is no check of the matrix).
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Mapping, Sequence

from repro.parameters import to_flags

from ...records import Source
from ...reproduce_line import shell_join
from ... import records
from ...config import Matrix
from ...install import Environment, locked_release, PackageIndex, Prepared, ResolvedRelease
from ...log_events import Log
from ...json_types import as_list, as_object
from ...records import Identity
from ...run import runner
from ...run.facts import job_label
from ...config import run_command
from ..candidates import Candidate
from ..specs import WhatRuns, WhatToReport
from ..observation import Observation
from ..outcomes import observation_of
from ..run_spec import RunSpec


class ReleaseSubject:
    """A release: prepared once per bisect, keyed by what it installs, its records in the matrix's folder."""

    def __init__(self, matrix: Matrix, spec: RunSpec, report: WhatToReport, candidates: Sequence[Candidate],
                 index: PackageIndex, log: Log) -> None:
        self.matrix, self.spec, self.report, self.index, self.log = matrix, spec, report, index, log
        """``report``: how a probe's reproduce line quotes the command line, and whether its output is echoed."""
        self.candidates: dict[str, Candidate] = {c.version: c for c in candidates}
        self.locked: dict[str, ResolvedRelease | None] = {}
        """Each release's lock as this bisect read it (None: never built), read once per release."""
        self.prepared: dict[str, Prepared] = {}
        self.environments: dict[str, str] = {}
        """``built`` or ``reused``, per release this bisect prepared."""

    @property
    def timeout(self) -> int:
        """A probe's time limit: the command line's, else the check's (a script's default)."""
        return self.spec.timeout

    def name_of(self, key: str) -> str:
        """How a log line names what is probed."""
        return f"jax {key}"

    # -- preparing

    def prepare(self, key: str) -> Prepared:
        """The release resolved and its environment built or reused, at most once per bisect."""
        if key not in self.prepared:
            prepared = runner.prepare(self.matrix, self.request(key), self.log, self.index)
            if key in self.locked and self.locked[key] is None:
                del self.locked[key]  # not built when its lock was read: built now, that lock is worth reading
            if prepared.environment is not None:
                self.environments[key] = prepared.environment.obtained
            self.prepared[key] = prepared
        return self.prepared[key]

    def environment_state(self, key: str) -> str | None:
        """Whether this bisect ``built`` or ``reused`` the environment it prepared for ``key`` (None: neither)."""
        return self.environments.get(key)

    def environment_of(self, key: str) -> Environment | None:
        """The environment this bisect prepared for ``key``; None when it prepared none (or could not)."""
        prepared = self.prepared.get(key)
        return prepared.environment if prepared is not None else None

    def resolved(self, key: str) -> tuple[str | None, str | None]:
        """The Python and jaxlib the release ran with here (the index's metadata when it was not prepared)."""
        return resolved_python_and_jaxlib(self.prepared.get(key), self.candidates[key])

    def done(self, key: str) -> None:
        """Nothing to undo after a release's probe: its environment stays for the next one."""

    def close(self) -> None:
        """Nothing to remove: environments are kept between bisects."""

    # -- identity

    def identity(self, key: str, prepared: Prepared) -> Identity:
        """This probe's identity, in the environment prepared for it."""
        return runner.prepared_identity(self.spec.subject, key, self.spec.backend, prepared)

    def requires(self, key: str) -> tuple[str, ...]:
        """The extra packages this probe's check installs with the release (its ``requires``, ``--requires``)."""
        return self.spec.install.requires

    def locked_identity(self, key: str) -> Identity | None:
        """This probe's identity from the lock of the release's built environment; None when it was never built."""
        if key not in self.locked:
            self.locked[key] = locked_release(self.matrix, key, self.spec.install)
        locked = self.locked[key]
        if locked is None or locked.resolution is None:
            return None
        return self.spec.identity(key, locked.resolution.python, locked.resolution.versions, locked.plan)

    def recorded(self, here: Identity, key: str) -> Observation | None:
        """A check's current record of this identity among the matrix's records, as an observation."""
        check = self.spec.asked.check
        if not check:
            return None
        # Read afresh for every probe: a sweep running alongside may have just measured this release.
        if self.spec.overrides:  # a record with timings answers an untimed probe: it read the same HLO
            here = dataclasses.replace(here, subject=self.spec.record_subject)
        parameters = as_object(here.subject.get("parameters"))
        newest = records.newest_records_here(self.matrix.results_dir, self.spec.backend,
                                             {check: parameters}, self.spec.preset)
        record = newest.get((check, key))
        if record is None or not records.is_current(record, here):
            return None
        tail = [str(line) for line in as_list(record.evidence.get("output_tail"))]
        return observation_of(record, Source.RECORD).with_came_from(
            ran_at=record.created, matched=records.summary(here), output_tail=tail,
            job=job_label(record.slurm or None)).with_cost(seconds=record.duration_s or 0.0)

    # -- running

    def request(self, key: str, log_file: Path | None = None) -> runner.RunRequest:
        """What the runner is asked for ``key``: the run spec, as that release's own (its Python tried first)."""
        candidate = self.candidates.get(key)
        spec = self.spec.for_release(candidate.python if candidate is not None else None)
        return runner.RunRequest(check=spec.name, version=key, script=spec.check, backend=spec.backend,
                                 preset=spec.preset, timeout_s=spec.timeout, install=spec.install,
                                 reproduce=reproduce_command(self.matrix, spec.asked, self.report, key, spec.overrides),
                                 output_log=log_file, records_dir=spec.records_dir, overrides=dict(spec.overrides),
                                 target=spec.asked.target,
                                 echo=self.report.verbose)  # quiet: the output is in the probe's log

    def run(self, key: str, prepared: Prepared, log_file: Path | None = None) -> records.Record:
        """One run through the runner, which writes its record (where this subject's records go); the record."""
        return self.run_request(self.request(key, log_file), prepared)

    def run_request(self, request: runner.RunRequest, prepared: Prepared) -> records.Record:
        """``request`` run in ``prepared`` (a commit subject's too: it runs as its build's release would)."""
        record, _path = runner.run_check(self.matrix, request, self.log, self.index, prepared=prepared,
                                         parameters=self.spec.parameters, check=self.spec.check)
        return records.Record(record)


def reproduce_command(matrix: Matrix, runs: WhatRuns, report: WhatToReport, version: str,
                      overrides: Mapping[str, object]) -> str:
    """A command that reruns one probe's check as written: a nox session where matrix.toml has one.

    ``overrides``: what the probe left out of the check's run (the run spec's). A ``--script`` has no command of
    its own for one release: the bisect that ran it reruns it.
    """
    check = runs.check
    if not check:
        return f"{report.command} {shell_join(report.quoted_argv)}"
    if runs.target is not None:  # the kit's --target takes the name
        overrides = {**overrides, "target": runs.target.name}
    untimed = " ".join(to_flags(overrides))  # the run as the probe made it
    if any(release.version == version for release in matrix.releases) \
            and matrix.shared_dir is None:
        return f"nox -s {check}-{version}" + (f" -- {untimed}" if untimed else "")
    flags = f" --backend {runs.backend}" if runs.backend != "cpu" else ""
    flags += f" --preset {runs.preset}" if runs.preset else ""
    flags += f" {untimed}" if untimed else ""
    return run_command(matrix, check, version) + flags


def resolved_python_and_jaxlib(prepared: Prepared | None, candidate: Candidate) -> tuple[str | None, str | None]:
    """The Python and jaxlib ``prepared`` resolved; the candidate's (from the index's metadata) where it has none."""
    resolution = prepared.resolution if prepared else None
    if resolution is None:
        return candidate.python, candidate.jaxlib
    return resolution.python, resolution.versions.get("jaxlib")
