"""kit/bisect/commits/probes.py: a commit as a probe's subject, over a release subject it asks for the build.

The release subject below it is a stand-in that answers from plain values and counts what it is asked (its own
behaviour is tests/test_bisect_release_subject.py's; the overlay itself, over real environments, is
tests/test_bisect_commit_search.py's). What is checked here is what the commit subject adds: its identity, its
name, its records' folder and reproduction, and that a build which could not be prepared lays nothing.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from kit.bisect.commits.builds import Build
from kit.bisect.commits.candidates import CommitCandidate
from kit.bisect.commits.probes import CommitSubject
from kit.bisect.options import BisectOptions
from kit.install.environment import Prepared
from kit.records import Identity
from kit.run import runner

COMMIT = "f93c2a1aa51d0d124bf0632eacbe95c261dacd57"
OTHER = "de4d047852986aebc7fd1c0872fb4a11448d9278"
BUILD = Build("0.5.2", "0.5.1", "3.13", True, "bad")


def release_identity(version: str) -> Identity:
    return Identity(subject={"check": "scaling", "parameters": {"batch": 64}}, jax=version, backend="cpu",
                    python="3.13", packages={"jax": version, "jaxlib": "0.5.1", "numpy": "2.2.4"},
                    install={"exclude_newer": None}, hardware={"cpu_model": "test"}, variables={})


class StandInReleases:
    """The release subject as a commit subject uses it: prepare a build, name its identity, make and run requests."""

    def __init__(self, prepared: Prepared, locked: bool = True) -> None:
        self.report = BisectOptions(check="scaling", script=None, good="0.5.3", bad="0.5.2", commits=True,
                              argv=("--check", "scaling", "--good", "0.5.3", "--bad", "0.5.2", "--commits")).specs.report
        self.prepared: dict[str, Prepared] = {}
        self.answer, self.locked = prepared, locked
        self.asked: list[str] = []
        self.lines: list[str] = []
        self.requests: list[runner.RunRequest] = []
        self.timeout = 90
        self.identities: dict[str, Identity] = {}

    def log(self, line: str) -> None:
        self.lines.append(line)

    def prepare(self, key: str) -> Prepared:
        self.asked.append(key)
        self.prepared[key] = self.answer
        return self.answer

    def identity(self, key: str, prepared: Prepared) -> Identity:
        return self.identities.setdefault(key, release_identity(key))  # one object per release, as a lock gives

    def locked_identity(self, key: str) -> Identity | None:
        return release_identity(key) if self.locked else None

    def request(self, key: str | None, log_file: Path | None = None) -> runner.RunRequest:
        return runner.RunRequest(check="scaling", version=key or "", reproduce=f"nox -s scaling-{key}",
                                 output_log=log_file)

    def run_request(self, request: runner.RunRequest, prepared: Prepared) -> dict[str, Any]:
        self.requests.append(request)
        return {"status": "ran", "verdict": "affected", "reason": "r"}


NOT_BUILT = Prepared(plan=None, resolution=None, environment=None, problem="uv could not build numpy")


def commit(hash_: str = COMMIT, build: Build | None = BUILD, title: str = "a change", jaxlib: str | None = "0.5.1",
           python: str | None = "3.13") -> CommitCandidate:
    return CommitCandidate(hash_, (), None, python, jaxlib, commit=hash_, build=build, title=title, date="2025-02-27")


def subject(tmp_path: Path, releases: StandInReleases, *candidates: CommitCandidate) -> CommitSubject:
    made = CommitSubject(releases, history=None, records_dir=tmp_path / "commit-records",  # type: ignore[arg-type]
                         bytecode_dir=tmp_path / "bytecode")
    for candidate in candidates or (commit(),):
        made.add(candidate)
    return made


def test_a_commit_s_identity_is_its_build_s_with_the_commit_and_its_version_in_place_of_the_release(
        tmp_path: Path) -> None:
    releases = StandInReleases(NOT_BUILT)
    commits = subject(tmp_path, releases, commit(), commit(OTHER))
    mine = commits.identity(COMMIT, NOT_BUILT)
    assert (mine.jax, mine.commit, mine.packages["jax"]) == (COMMIT[:10], COMMIT, COMMIT[:10])
    assert mine.packages["jaxlib"] == "0.5.1"
    assert mine.subject["parameters"] == {"batch": 64}
    assert "overlay_format" in mine.subject  # a change to what is laid over must run every commit again
    # Two commits on one build are two probes; the same commit on the same build is one, from any bisect.
    assert mine.digest() != commits.identity(OTHER, NOT_BUILT).digest()
    assert mine.digest() == subject(tmp_path, StandInReleases(NOT_BUILT)).identity(COMMIT, NOT_BUILT).digest()
    # The build's own identity is left as it was: a shared mapping changed in place would relabel the release.
    build = releases.identities["0.5.2"]
    assert build.packages["jax"] == "0.5.2"
    assert build.jax == "0.5.2"
    assert "overlay_format" not in build.subject


def test_the_locked_identity_is_the_commit_s_and_none_without_a_build_or_a_lock(tmp_path: Path) -> None:
    commits = subject(tmp_path, StandInReleases(NOT_BUILT), commit(), commit(OTHER, build=None))
    locked = commits.locked_identity(COMMIT)
    assert locked is not None
    assert locked.commit == COMMIT
    assert (locked.digest() == commits.identity(
        COMMIT, NOT_BUILT).digest())  # the lock and a prepared build name the same probe
    assert commits.locked_identity(OTHER) is None  # no build accepts it: nothing to look up, and no crash
    unbuilt = subject(tmp_path, StandInReleases(NOT_BUILT, locked=False))
    assert unbuilt.locked_identity(COMMIT) is None


@pytest.mark.parametrize(("candidate", "name"), [
    (commit(title="x" * 100), f"commit {COMMIT[:10]} ({'x' * 60}) on jaxlib 0.5.1"),  # the title cut at 60
    (commit(jaxlib=None), f"commit {COMMIT[:10]} (a change)"),  # no jaxlib known: no dangling "on jaxlib "
])
def test_a_commit_is_named_by_its_short_hash_title_and_jaxlib(tmp_path: Path, candidate: CommitCandidate,
                                                              name: str) -> None:
    assert subject(tmp_path, StandInReleases(NOT_BUILT), candidate).name_of(COMMIT) == name


def test_a_build_that_could_not_be_prepared_lays_nothing_and_is_prepared_once(tmp_path: Path) -> None:
    releases = StandInReleases(NOT_BUILT)
    commits = subject(tmp_path, releases)
    first = commits.prepare(COMMIT)
    assert first is NOT_BUILT
    assert commits.prepare(COMMIT) is first
    assert releases.asked == ["0.5.2"]  # once, however often the judge asks
    assert commits.environment_state(COMMIT) is None  # neither built nor reused: the report must not say so
    assert not any(line.startswith("laid ") for line in releases.lines)
    assert commits.recorded(commits.identity(COMMIT, first), COMMIT) is None  # commits have no matrix records
    commits.done(COMMIT)
    commits.close()  # nothing laid: nothing to remove, and no error for it


def test_resolved_falls_back_to_the_candidate_s_build_before_it_is_prepared(tmp_path: Path) -> None:
    commits = subject(tmp_path, StandInReleases(NOT_BUILT), commit(python="3.12", jaxlib="0.5.0"))
    assert commits.resolved(COMMIT) == ("3.12", "0.5.0")
    assert commits.timeout == 90  # the release subject's: a commit runs under its build's limit


def test_pair_runs_on_a_build_that_could_not_be_prepared_says_so_and_runs_nothing(tmp_path: Path) -> None:
    runs = subject(tmp_path, StandInReleases(NOT_BUILT)).pair_runs(commit())
    assert not runs.ok
    assert runs.error == "jax 0.5.2's environment could not be prepared: uv could not build numpy"


def test_a_commit_runs_as_its_build_would_but_as_the_commit_its_record_apart_and_the_bisect_its_reproduction(
        tmp_path: Path) -> None:
    releases = StandInReleases(NOT_BUILT)
    commits = subject(tmp_path, releases)
    record = commits.run(COMMIT, NOT_BUILT, tmp_path / "probe.log")
    (request,) = releases.requests
    assert record["verdict"] == "affected"
    assert request.version == COMMIT[:10]  # not 0.5.2: the record must not pass for the release's
    assert request.records_dir == tmp_path / "commit-records"  # never the matrix's folder, which reads releases
    assert request.reproduce == "nox -s bisect -- --check scaling --good 0.5.3 --bad 0.5.2 --commits"
    assert request.output_log == tmp_path / "probe.log"
