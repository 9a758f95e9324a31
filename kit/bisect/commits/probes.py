"""One commit probe's subject: the commit's Python laid over a release environment, then the same run as a release.

:class:`CommitSubject` answers the subject's three questions for a commit
(:mod:`kit.bisect.probe.probes`): how it is prepared (its build's release
environment, prepared by the release subject so nothing is built twice, with
the commit laid over it by :mod:`kit.install.overlay`), what names it in the
probe cache (the commit and the jaxlib build, never the key the search
walks), and where a check's record goes (``reports/bisect/commit-records/``:
a commit is not a release, and the matrix reads only releases). The judge is
the release phase's own, so the cache, re-runs, ``--confirm``, ``--crash`` and
``--metric`` (against the same baseline) work on commits unchanged.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from ...log_events import detail
from ...history.source import History
from ...install import (
    compile_environment, fill_bytecode, JAX_ALONE, new_overlay_folder, over_release, OVERLAY_FORMAT, Prepared, remove_overlay,
)
from ...records import Identity, Record
from ...reproduce_line import shell_join
from ...run.jax_runs import JaxRuns, jax_runs
from ..candidates import Candidate
from .candidates import CommitCandidate
from ..observation import Observation
from ..probe import Prober, ReleaseSubject, resolved_python_and_jaxlib


class CommitSubject:
    """A commit on its build: laid over the build's release environment, which ``releases`` prepares."""

    def __init__(self, releases: ReleaseSubject, history: History, records_dir: Path, bytecode_dir: Path) -> None:
        self.releases, self.history = releases, history
        self.records_dir, self.bytecode_dir = records_dir, bytecode_dir
        self.commits: dict[str, CommitCandidate] = {}  # added per search (`add`)
        self.candidates: dict[str, Candidate] = {}
        self.prepared: dict[str, Prepared] = {}
        self.environments: dict[str, str] = {}
        self._folders: list[Path] = []
        self._compiled: set[str] = set()

    def add(self, candidate: CommitCandidate) -> None:
        """One more candidate (the same commit on another build), probed outside the search."""
        self.commits[candidate.version] = candidate
        self.candidates[candidate.version] = candidate

    @property
    def timeout(self) -> int:
        return self.releases.timeout

    def name_of(self, key: str) -> str:
        candidate = self.commits[key]
        on = f" on jaxlib {candidate.jaxlib}" if candidate.jaxlib else ""
        on += " (forced: JAX's version check relaxed)" if candidate.forced else ""
        on += f" ({candidate.laid})" if candidate.laid == JAX_ALONE else ""
        return f"commit {candidate.short} ({candidate.title[:60]}){on}"

    def _build_of(self, key: str) -> str:
        """The release whose environment the commit is laid over."""
        return _release_of(self.commits[key])

    # -- identity

    def identity(self, key: str, prepared: Prepared) -> Identity:
        return self._as_commit(self.commits[key], self.releases.identity(self._build_of(key), prepared))

    def locked_identity(self, key: str) -> Identity | None:
        if self.commits[key].build is None:
            return None
        base = self.releases.locked_identity(self._build_of(key))
        return self._as_commit(self.commits[key], base) if base is not None else None

    def _as_commit(self, candidate: CommitCandidate, release: Identity) -> Identity:
        """The release's identity, made the commit's: the same probe on the same build, from any bisect, is known."""
        # The overlay's format is part of what ran: a change to what is laid over runs every commit again.
        subject = {**release.subject, "overlay_format": OVERLAY_FORMAT}
        if candidate.laid == JAX_ALONE:  # another overlay, another probe; WITH_JAXLIB keeps format 4's key
            subject["overlay_laid"] = candidate.laid
        return dataclasses.replace(release, subject=subject, jax=candidate.jax_version, commit=candidate.commit,
                                   packages={**release.packages, "jax": candidate.jax_version})

    def recorded(self, here: Identity, key: str) -> Observation | None:
        return None  # commits have no matrix records

    # -- preparing

    def prepare(self, key: str) -> Prepared:
        """The build's release environment (prepared once, by the release subject), the commit laid over it."""
        candidate = self.commits[key]
        if key not in self.prepared:
            known_before = self._build_of(key) in self.releases.prepared
            base, self.prepared[key] = self._lay(candidate)
            if base.environment is not None:
                self.environments[key] = "built" if not known_before and not base.environment.reused else "reused"
        return self.prepared[key]

    def environment_state(self, key: str) -> str | None:
        return self.environments.get(key)

    def resolved(self, key: str) -> tuple[str | None, str | None]:
        """The Python and jaxlib of the build it was laid over (its candidate's, where it was not prepared)."""
        return resolved_python_and_jaxlib(self.prepared.get(key), self.commits[key])

    def _lay(self, candidate: CommitCandidate) -> tuple[Prepared, Prepared]:
        """(the build's release environment, the commit laid over it): a new overlay folder, this subject's to remove."""
        release = _release_of(candidate)  # also for a pair `runnable` asks about, not (yet) a candidate
        base = self.releases.prepare(release)  # each release prepared once per bisect
        if base.environment is None:
            return base, base
        if release not in self._compiled:  # once per environment and bisect: later it is current
            self._compiled.add(release)
            self.releases.log(detail(f"jax {release}'s environment: {compile_environment(base.environment.python)}"))
        folder = new_overlay_folder()
        self._folders.append(folder)
        laid = over_release(base, self.history, candidate.commit, candidate.jax_version, folder, candidate.laid,
                            minimum=candidate.jaxlib if candidate.forced else None)
        made = fill_bytecode(base.environment.python, folder, self.bytecode_dir)
        self.releases.log(detail(f"laid {candidate.short}'s {candidate.laid} over jax {release}'s environment "
                                 f"({folder}); {made}"))
        return base, laid

    def pair_runs(self, candidate: CommitCandidate) -> JaxRuns:
        """Does JAX itself import and run with this commit laid over its build? (`kit.bisect.commits.runnable`)"""
        base, laid = self._lay(candidate)
        try:
            if laid.environment is None:
                return JaxRuns(False, f"jax {candidate.build.release if candidate.build else '?'}'s environment "
                                      f"could not be prepared: {base.problem}")
            runs = jax_runs(laid.environment)
        finally:
            self._remove(laid)
        self.releases.log(detail(f"  {candidate.short} on jaxlib {candidate.jaxlib}: {runs.sentence()} "
                                 f"({runs.seconds:.1f} s)"))
        return runs

    # -- running

    def run(self, key: str, prepared: Prepared, log_file: Path | None = None) -> Record:
        """The build's release run, as the commit: its version, its records apart, the bisect as its reproduction."""
        candidate = self.commits[key]
        request = dataclasses.replace(self.releases.request(self._build_of(key), log_file),
                                      version=candidate.jax_version, records_dir=self.records_dir,
                                      reproduce=f"{self.releases.report.command} {shell_join(self.releases.report.quoted_argv)}")
        return self.releases.run_request(request, prepared)

    def done(self, key: str) -> None:
        """The commit's overlay goes (about 13 MB each: hundreds would fill a disk); the probe cache keeps what it showed."""
        prepared = self.prepared.pop(key, None)
        if prepared is not None:
            self._remove(prepared)

    def _remove(self, prepared: Prepared) -> None:
        for folder in prepared.environment.pythonpath if prepared.environment else ():
            if folder in self._folders:
                remove_overlay(folder)
                self._folders.remove(folder)

    def close(self) -> None:
        """Remove every overlay this subject laid that is still there."""
        for folder in self._folders:
            remove_overlay(folder)
        self._folders.clear()


def _release_of(candidate: CommitCandidate) -> str:
    build = candidate.build
    assert build is not None, "a commit no build accepts is ruled out before it is prepared"
    return build.release


CommitProber = Prober[CommitSubject]
"""The commit phase's prober: commits as the subject, judged as the release phase judged releases."""
