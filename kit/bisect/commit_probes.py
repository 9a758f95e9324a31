"""One commit probe: the commit's Python laid over a release environment, then the same run as a release.

:class:`CommitProber` is the release :class:`~kit.bisect.probes.Prober` with
three answers changed: how a candidate is prepared (the build's release
environment, prepared through the release prober so nothing is built twice,
with the commit laid over it by :mod:`kit.install.overlay`), what names it in
the probe cache (the commit and the jaxlib build, never the key the search
walks), and where a check's record goes (``reports/bisect/commit-records/``:
a commit is not a release, and the matrix reads only releases). Everything
else, the cache, re-runs, ``--confirm``, ``--crash`` and ``--metric`` (via
:class:`CommitMetricProber`), is the release prober's own.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any, Mapping

from ..config import Matrix
from ..history.source import History
from ..install.index import PackageIndex
from ..install.bytecode import compile_environment, fill_bytecode
from ..install.overlay import OVERLAY_FORMAT, new_overlay_folder, remove_overlay
from ..records import Identity
from ..install.environment import Prepared, over_release
from ..run import runner
from ..run.jax_runs import JaxRuns, jax_runs
from .candidates import Candidate
from .commit_candidates import CommitCandidate
from .metric import MetricProber
from .options import Log, Options
from .outcomes import Observation
from .probe_cache import ProbeCache
from .probes import Prober


class CommitProber(Prober):
    """Turns a commit (on its build) into an outcome; releases it is handed go to ``releases``."""

    def __init__(self, matrix: Matrix, options: Options, cache: ProbeCache,
                 subject: Mapping[str, Any], name: str, index: PackageIndex, log: Log,
                 releases: Prober, history: History) -> None:
        super().__init__(matrix, options, list(releases.candidates.values()), cache, subject, name,
                         index, log)
        self.releases, self.history = releases, history
        self.commits: dict[str, CommitCandidate] = {}  # added per search (`add`)
        self._folders: list[Path] = []
        self._compiled: set[str] = set()

    def add(self, candidate: CommitCandidate) -> None:
        """One more candidate (the same commit on another build), probed outside the search."""
        self.commits[candidate.version] = candidate
        self.candidates[candidate.version] = candidate

    def records_dir(self, matrix: Matrix, options: Options) -> Path:
        # Check records of commits stay out of the matrix's folder (its model reads releases only), --script or not.
        return commit_records_dir(matrix)

    def name_of(self, version: str) -> str:
        candidate = self.commits.get(version)
        if candidate is None:
            return super().name_of(version)
        on = f" on jaxlib {candidate.jaxlib}" if candidate.jaxlib else ""
        return f"commit {candidate.short} ({candidate.title[:60]}){on}"

    def identity(self, version: str, prepared: Prepared) -> Identity:
        candidate = self.commits.get(version)
        if candidate is None or candidate.build is None:
            return super().identity(version, prepared)
        return self._as_commit(candidate, super().identity(candidate.build.release, prepared))

    def locked_identity(self, version: str) -> Identity | None:
        candidate = self.commits.get(version)
        if candidate is None or candidate.build is None:
            return super().locked_identity(version)
        base = super().locked_identity(candidate.build.release)
        return self._as_commit(candidate, base) if base is not None else None

    def _as_commit(self, candidate: CommitCandidate, release: Identity) -> Identity:
        """The release's identity, made the commit's: the same probe on the same build, from any bisect, is known."""
        # The overlay's format is part of what ran: a change to what is laid over runs every commit again.
        subject = {**release.subject, "overlay_format": OVERLAY_FORMAT}
        return dataclasses.replace(release, subject=subject, jax=candidate.jax_version, commit=candidate.commit,
                                   packages={**release.packages, "jax": candidate.jax_version})

    def _record_observation(self, here: Identity, version: str) -> Observation | None:
        if version in self.commits:
            return None  # commits have no matrix records
        return self.releases._record_observation(here, version)  # the matrix's records, not commit-records/

    def _request(self, version: str | None, log_file: Path | None = None) -> runner.RunRequest:
        candidate = self.commits.get(version) if version is not None else None
        if candidate is None or candidate.build is None:
            return super()._request(version, log_file)
        request = super()._request(candidate.build.release, log_file)
        return dataclasses.replace(request, version=candidate.jax_version,
                                   reproduce=f"nox -s bisect -- {' '.join(self.options.argv)}")

    def _prepare(self, version: str) -> Prepared:
        """The build's release environment (prepared once, by the release prober), the commit laid over it."""
        candidate = self.commits.get(version)
        if candidate is None or candidate.build is None:
            return self.releases._prepare(version)
        if version not in self._prepared:
            known_before = candidate.build.release in self.releases._prepared
            base, self._prepared[version] = self._lay(candidate)
            if base.environment is not None:
                self._environments[version] = "built" if not known_before and not base.environment.reused else "reused"
        return self._prepared[version]

    def _lay(self, candidate: CommitCandidate) -> tuple[Prepared, Prepared]:
        """(the build's release environment, the commit laid over it): a new overlay folder, this prober's to remove."""
        assert candidate.build is not None
        release = candidate.build.release
        base = self.releases._prepare(release)  # the release prober's: each release prepared once per bisect
        if base.environment is None:
            return base, base
        if release not in self._compiled:  # once per environment and bisect: later it is current
            self._compiled.add(release)
            self.log(f"jax {release}'s environment: {compile_environment(base.environment.python)}")
        folder = new_overlay_folder()
        self._folders.append(folder)
        laid = over_release(base, self.history, candidate.commit, candidate.jax_version, folder)
        made = fill_bytecode(base.environment.python, folder, commit_bytecode_dir(self.matrix))
        self.log(f"laid {candidate.short}'s jax/ and jaxlib Python over jax {release}'s environment ({folder}); {made}")
        return base, laid

    def pair_runs(self, candidate: CommitCandidate) -> JaxRuns:
        """Does JAX itself import and run with this commit laid over its build? (`kit.bisect.runnable`)"""
        base, laid = self._lay(candidate)
        try:
            if laid.environment is None:
                return JaxRuns(False, f"jax {candidate.build.release if candidate.build else '?'}'s environment "
                                      f"could not be prepared: {base.problem}")
            runs = jax_runs(laid.environment)
        finally:
            self._remove(laid)
        self.log(f"  {candidate.short} on jaxlib {candidate.jaxlib}: {runs.sentence()} ({runs.seconds:.1f} s)")
        return runs

    def _remove(self, prepared: Prepared) -> None:
        for folder in prepared.environment.pythonpath if prepared.environment else ():
            if folder in self._folders:
                remove_overlay(folder)
                self._folders.remove(folder)

    def observe(self, candidate: Candidate) -> Observation:
        """As for a release; then the commit's overlay goes (about 13 MB each: hundreds would fill a disk)."""
        try:
            return super().observe(candidate)
        finally:
            prepared = self._prepared.pop(candidate.version, None) if candidate.version in self.commits else None
            if prepared is not None:
                self._remove(prepared)

    def close(self) -> None:
        """Remove every overlay this prober laid that is still there (the probe cache keeps what they showed)."""
        for folder in self._folders:
            remove_overlay(folder)
        self._folders.clear()


class CommitMetricProber(CommitProber, MetricProber):
    """``--metric`` over commits: each commit judged against runs of the --good release, as releases are."""

    def adopt_baseline(self, releases: MetricProber) -> None:
        """The release phase's baseline (the bounds' step and which way is worse) judges commits too."""
        self.base, self.unit, self.better, self.good = releases.base, releases.unit, releases.better, releases.good


def commit_records_dir(matrix: Matrix) -> Path:
    """Where check records of commit probes go: beside the probe cache, not among the matrix's records."""
    return matrix.results_dir.parent / "bisect" / "commit-records"


def commit_bytecode_dir(matrix: Matrix) -> Path:
    """Where commit overlays' bytecode is kept between probes and bisects (`kit.install.bytecode`)."""
    return matrix.envs_dir.parent / "commit-bytecode"
