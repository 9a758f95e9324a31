"""kit.bisect.commit_search end to end over the fake JAX history (tests/fake_jax.py).

The releases' "built environments" are fakes (tests/fake_jax.fake_env), but
they are built as a real build leaves them (tests/fake_jax.build_fake_release:
the environment where kit.install.envs looks, finished, and its lock), and
the rest is real: which release is built and what it installed are read from
the locks, the history is read with git, each commit is laid over an
environment by kit.install.overlay, and the user's script runs with that
environment's python and the overlay first on its path.
"""

from __future__ import annotations

import dataclasses
import json
import math
import shutil
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from fake_jax import (BUMP_TITLE, FIX_TITLE, GATE_TITLE, KERNELS_TITLE, MERGE_TITLE, NOISE_FIX_TITLE, PLUGINS_TITLE,
                      PREP_TITLE, RENAME_TITLE,
                      SCRIPT_BATCH, SCRIPT_GATE, SCRIPT_KERNEL, SCRIPT_NOISE, XLA_NEW, XLA_OLD, commit_titled,
                      build_fake_release, make_repo, renamed_history)
from kit.bisect.report import changelog
from kit.bisect import commit_search, driver
from kit.bisect.candidates import Candidate
from kit.bisect.report.finding import REPORT_SCHEMA
from kit.config import parse_matrix
from kit.errors import HistoryUnreachable, UsageError
from kit.history import source
from kit.install.environment import BUILT, Prepared
from kit.install import key as install_key
from kit.install.key import InstallKey
from kit.install.lockfile import install_settings, read_lock
from kit.run import runner
from tests.call_counts import count_calls
from tests.metadata_index import TableIndex

RELEASES = ["0.1.0", "0.2.0"]


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_repo(tmp_path_factory.mktemp("history") / "jax")


@dataclasses.dataclass
class World:
    """The fakes' shared state: which release environments were prepared (and built)."""

    repo: Path
    root: Path
    prepared: list[str] = dataclasses.field(default_factory=list)
    built: set[str] = dataclasses.field(default_factory=lambda: set(RELEASES))


@pytest.fixture
def matrix(tmp_path: Path) -> Any:
    m = parse_matrix({"release": [{"version": "0.1.0"}], "checks": {"scaling": {"devices": [1, 2], "batch": 64}}})
    return dataclasses.replace(m, results_dir=tmp_path / "reports" / "results", envs_dir=tmp_path / ".nox" / "jax-envs")


@pytest.fixture
def world(repo: Path, matrix: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> World:
    return make_world(repo, matrix, tmp_path, monkeypatch)


def make_world(repo: Path, matrix: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
               key: InstallKey = InstallKey("cpu")) -> World:
    """The fake releases 0.1.0 and 0.2.0 of ``repo``, built as ``key`` asks, and the drivers pointed at them.

    Each is built as a real build leaves it (`fake_jax.build_fake_release`: its environment where
    `kit.install.envs` looks, finished, and its lock), so what reads locks and environments runs for real:
    `release.built_env`, `release.locked_release` and `environment.prepare` itself. Only the install is faked
    (in `prepare` below, for an environment not built yet).
    """
    world = World(repo, tmp_path)
    for version in RELEASES:
        build_fake_release(matrix, key, repo, version)

    def list_candidates(matrix: Any, versions: list[str], key: Any, index: Any) -> list[Candidate]:
        return [Candidate(v, (f"jax[cpu]=={v}",), None, "3.12", v, uploaded="2025-01-01") for v in versions]

    real_prepare = runner.prepare

    def prepare(matrix: Any, request: runner.RunRequest, log: Any, index: Any = None) -> Prepared:
        world.prepared.append(request.version)
        key = request.install or InstallKey(request.backend, request.find_links,
                                            requires=runner.check_for(matrix, request).requires)
        settings = install_settings(matrix, matrix.release(request.version), key)
        fresh = read_lock(matrix.envs_dir, settings) is None
        if fresh:  # what installing it would leave; the kit then finds it as built
            build_fake_release(matrix, key, repo, request.version)
        world.built.add(request.version)
        prepared = real_prepare(matrix, request, log, index)
        assert prepared.environment is not None, prepared.problem
        return dataclasses.replace(prepared, environment=dataclasses.replace(prepared.environment, obtained=BUILT)) \
            if fresh else prepared

    monkeypatch.setattr(driver, "open_index", lambda matrix: TableIndex(releases=RELEASES, cache_dir=tmp_path / "cache"))
    monkeypatch.setattr(driver, "list_candidates", list_candidates)
    monkeypatch.setattr(changelog, "fetch_changelog", lambda *args, **kwargs: (None, "offline in the tests"))
    monkeypatch.setattr(runner, "prepare", prepare)
    return world


def script(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "repro.py"
    path.write_text(text)
    return path


def run(matrix: Any, *argv: str) -> tuple[dict[str, Any], str, list[str]]:
    lines: list[str] = []
    assert driver.main(matrix, list(argv), lines.append) == 0
    path = max(matrix.results_dir.parent.glob("bisect-*.json"), key=lambda p: p.stat().st_mtime_ns)
    data = json.loads(path.read_text())
    assert data["schema"] == REPORT_SCHEMA
    return data, path.with_suffix(".md").read_text(), lines


def test_fix_is_named_inside_the_merge_with_jaxlib_python_laid_over(matrix: Any, world: World, tmp_path: Path) -> None:
    data, _markdown, _log = run(matrix, "--script", str(script(tmp_path, SCRIPT_BATCH)), "--good", "0.2.0",
                                "--bad", "0.1.0", "--commits", "--jax-repo", str(world.repo))
    commits = data["commits"]
    fix = commit_titled(world.repo, FIX_TITLE)
    assert commits["verdict"] == "commit"
    assert commits["first_different"]["hash"] == fix
    assert commits["first_different"]["title"] == FIX_TITLE
    assert commits["first_different"]["pr"] == 4242
    assert commits["first_different"]["author"].startswith("Jax Dev")
    assert commits["first_different"]["files"] == ["jax/_src/linalg.py"]
    assert commits["last_same"]["title"] == "Teach lapack about batch dimensions"
    assert commits["levels"][1]["shape"].startswith(commit_titled(world.repo, MERGE_TITLE)[:10])  # the merge, opened
    # The search's bound; the found pair, refused on jaxlib 0.2.0 by JAX's version check alone, costs two forced
    # probes more there (a lead on whether the fix needs its build, never the answer).
    searched = [key for key in commits["probed_now"] if not key.endswith("-forced")]
    assert len(searched) <= math.ceil(math.log2(commits["range"]["commits"])) + 3
    assert len(commits["probed_now"]) - len(searched) <= 2
    assert commits["tie_break"]["kind"] == "untested-elsewhere"
    assert ("forced past JAX's version check" in \
        commits["tie_break"]["why"])
    assert world.built == set(RELEASES)
    assert all(p["jaxlib"] in RELEASES for p in commits["probes"])
    # Prose on purpose, a quoted changelog: the notes are the clone's CHANGELOG.md (its heading, not offline), of
    # which only entries naming what the script calls are quoted (none here).
    assert data["release_notes"] == ["## jax 0.2.0 (Feb 20, 2025)", "", "_0 of 1 entries mention `batch_sharded`; the "
                                     "whole section: https://github.com/jax-ml/jax/blob/jax-v0.2.0/CHANGELOG.md_"]
    bisect_dir = matrix.results_dir.parent / "bisect"  # a --script's commit records: commit-records/, once
    assert list((bisect_dir / "commit-records").glob("*.json"))
    assert not (bisect_dir / "bisect").exists()


def files_of(tree: Path) -> dict[str, tuple[int, int]]:
    return {str(p.relative_to(tree)): (p.stat().st_size, p.stat().st_mtime_ns) for p in tree.rglob("*") if p.is_file()}


def test_a_users_clone_is_only_read(matrix: Any, world: World, tmp_path: Path) -> None:
    before = files_of(world.repo)  # a full clone, as /work/.mirror's read-only one: nothing fetched, locked or written
    data, _markdown, _log = run(matrix, "--script", str(script(tmp_path, SCRIPT_BATCH)), "--good", "0.2.0",
                                "--bad", "0.1.0", "--commits", "--jax-repo", str(world.repo))
    assert data["commits"]["verdict"] == "commit"
    assert files_of(world.repo) == before


def test_change_only_in_the_compiled_jaxlib_is_not_in_python_once_the_old_ends_python_gave_the_new_outcome(
        matrix: Any, world: World, tmp_path: Path) -> None:
    # The same Python (the newest commit on jaxlib 0.1.0) is bad there and good on 0.2.0. That alone is not enough:
    # the commits before the version bump cannot run on 0.2.0 unforced (JAX refuses a newer jaxlib), so the old
    # end's Python is run there forced, past that check; it gives the new outcome too: not in JAX's Python.
    data, _markdown, _log = run(matrix, "--script", str(script(tmp_path, SCRIPT_KERNEL)), "--good", "0.2.0",
                                "--bad", "0.1.0", "--commits", "--jax-repo", str(world.repo))
    commits = data["commits"]
    assert commits["verdict"] == "not-in-python"
    assert (commits["not_in_python"]["old_jaxlib"], commits["not_in_python"]["new_jaxlib"]) == ("0.1.0", "0.2.0")
    assert commits["not_in_python"]["old_xla"] == XLA_OLD
    assert commits["not_in_python"]["new_xla"] == XLA_NEW
    assert commits["not_in_python"]["compiled_files"] == ["jaxlib/kernels.cc"]
    assert commits["not_in_python"]["xla_compare"] == f"https://github.com/openxla/xla/compare/{XLA_OLD}...{XLA_NEW}"
    assert commits["tie_break"]["kind"] == "binary"
    evidence = commits["tie_break"]["evidence"]
    old_end = commits["range"]["old_end"]
    assert {"commit": old_end, "jaxlib": "0.2.0", "outcome": "good", "forced": True, "note": "", "laid": ""} in evidence
    assert [e for e in evidence if not e["forced"] and e["outcome"] == "bad"]  # a forced probe never stands alone
    assert len(commits["probed_now"]) <= 5  # newest on the old build, that Python, oldest and old end on the new


def test_regression_direction_and_identical_rerun_runs_nothing(matrix: Any, world: World, tmp_path: Path) -> None:
    repro = script(tmp_path, "import sys, jax\nsys.exit(1 if jax.batch_sharded() else 0)\n")  # the fix, as a regression
    argv = ["--script", str(repro), "--good", "0.1.0", "--bad", "0.2.0", "--commits", "--jax-repo", str(world.repo)]
    first, _md, _log = run(matrix, *argv)
    assert first["commits"]["first_different"]["title"] == FIX_TITLE
    world.prepared.clear()
    again, _markdown, _log = run(matrix, *argv)
    assert again["probed_now"] == []  # no release probe
    assert again["commits"]["probed_now"] == []  # no commit probe
    assert again["environments_built_now"] == []
    assert again["commits"]["first_different"]["hash"] == first["commits"]["first_different"]["hash"]
    assert world.prepared == []  # nothing was even prepared


PIN = "numpy==1.26.4"


def test_a_pinned_commit_bisect_reads_the_pinned_environments_lock(matrix: Any, repo: Path, tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """``--pin``: whether a build is built, and what each probe installed, come from the pinned environment's lock.

    Each release also has an unpinned lock, naming another jaxlib, whose environment has been removed since.
    Read for the pinned bisect (the pins dropped on the way, as ``built_env`` once did), it would call both
    builds unbuilt and miss every probe's kept answer on a rerun, which then prepares the releases again.
    """
    world = make_world(repo, matrix, tmp_path, monkeypatch, key=InstallKey("cpu", pins=(PIN,)))
    for version in RELEASES:
        shutil.rmtree(build_fake_release(matrix, InstallKey("cpu"), repo, version, jaxlib="0.1.5"))
    argv = ["--script", str(script(tmp_path, SCRIPT_BATCH)), "--good", "0.2.0", "--bad", "0.1.0", "--commits",
            "--jax-repo", str(repo), "--pin", PIN]
    keys: Counter[str] = Counter()
    count_calls(monkeypatch, "InstallKey", install_key.InstallKey, keys)
    first, _markdown, _log = run(matrix, *argv)
    assert keys["InstallKey"] == 1  # the run spec's: the commit phase asks whether a build is built with it too
    commits = first["commits"]
    assert commits["first_different"]["title"] == FIX_TITLE
    assert [(b["jaxlib"], b["built"]) for b in commits["builds"]] == [("0.1.0", True), ("0.2.0", True)]
    assert all(seen["installed"]["packages"] == {"jax": v, "jaxlib": v, "numpy": "1.26.4"} for v, seen in first["observations"].items())
    assert all(probe["jaxlib"] in RELEASES for probe in commits["probes"])
    world.prepared.clear()
    again, _md, _log = run(matrix, *argv)
    assert again["probed_now"] == []
    assert again["commits"]["probed_now"] == []
    assert world.prepared == []  # every answer found under the identity the pinned lock gives
    assert again["commits"]["first_different"]["hash"] == commits["first_different"]["hash"]


def test_commit_nothing_can_run_is_skipped_with_the_reason(world: World) -> None:
    from kit.bisect.commits.candidates import commit_candidates
    from kit.history.commit_range import release_range
    from kit.bisect.commits.builds import Build

    history = source.History(world.repo, "--jax-repo")
    builds = [Build("0.1.0", "0.1.0", "3.12", True, "bad"), Build("0.2.0", "0.2.0", "3.12", True, "good")]
    candidates = commit_candidates(history, release_range(history, "0.1.0", "0.2.0"), builds)
    by_title = {c.title: c for c in candidates}
    assert "needs jaxlib >= 0.1.5 and <= 0.1.0" in by_title["Bump the minimum jaxlib version to 0.1.5"].problem
    assert by_title[BUMP_TITLE].jaxlib == "0.1.0"  # accepts both: the bad side's build first
    assert by_title["JAX release v0.2.0"].jaxlib == "0.2.0"  # accepts only the new jaxlib
    kernels = by_title[KERNELS_TITLE].accepts
    assert kernels is not None
    assert kernels.accepts("0.2.0")


@pytest.mark.parametrize(("flags", "message"), [(["--commits", "--all"], "--commits narrows one change")])
def test_options_that_do_not_go_together_are_refused(matrix: Any, world: World, tmp_path: Path, flags: list[str],
                                                    message: str) -> None:
    with pytest.raises(UsageError, match=message):
        driver.main(matrix, ["--script", str(script(tmp_path, SCRIPT_BATCH)), "--good", "0.2.0", "--bad", "0.1.0",
                             *flags], print)
    assert world.prepared == []


def test_no_clone_and_remote_unreachable_is_exit_4_before_any_probe(matrix: Any, world: World, tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(source, "JAX_REMOTE", "https://127.0.0.1:9/jax-ml/jax.git")  # a port nothing listens on
    with pytest.raises(HistoryUnreachable) as error:
        driver.main(matrix, ["--script", str(script(tmp_path, SCRIPT_BATCH)), "--good", "0.2.0", "--bad", "0.1.0",
                             "--commits"], print)
    assert error.value.exit_code == 4
    assert "--jax-repo" in error.value.message
    assert world.prepared == []
    assert not matrix.results_dir.exists()


def test_kits_own_clone_from_a_file_remote(matrix: Any, world: World, tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(source, "JAX_REMOTE", world.repo.as_uri())
    data, _md, _log = run(matrix, "--script", str(script(tmp_path, SCRIPT_BATCH)), "--good", "0.2.0", "--bad",
                          "0.1.0", "--commits")
    assert data["commits"]["first_different"]["title"] == FIX_TITLE
    clone = matrix.envs_dir.parent / "jax-history" / "jax.git"
    assert data["commits"]["history"].startswith(f"the kit's clone of {world.repo.as_uri()} in ")  # cloned from there
    assert (clone / "HEAD").is_file()


METRIC_SCRIPT = """\
import json, os, jax
base = 1.0 if jax.batch_sharded() else 3.0  # 3x slower until the fix
samples = [base + 0.01 * i for i in range(12)]
with open(os.environ["KIT_RESULT"], "w") as out:
    json.dump({"metrics": {"t_ms": {"unit": "ms", "samples": samples, "better": "lower"}}}, out)
"""


def test_metric_over_commits_names_the_commit(matrix: Any, world: World, tmp_path: Path) -> None:
    data, _md, _log = run(matrix, "--script", str(script(tmp_path, METRIC_SCRIPT)), "--metric", "t_ms", "--good",
                          "0.2.0", "--bad", "0.1.0", "--commits", "--jax-repo", str(world.repo))
    assert data["commits"]["verdict"] == "commit"
    assert data["commits"]["first_different"]["title"] == FIX_TITLE


SKIPPY_SCRIPT = """\
import sys, jax
from jax._src import noise
if 1 <= noise.NOISE <= 10:
    sys.exit(125)  # "cannot test this one", for most of the range
sys.exit(0 if jax.batch_sharded() else 1)
"""


def test_a_long_untestable_stretch_stops_after_the_skip_budget(matrix: Any, world: World, tmp_path: Path) -> None:
    data, _markdown, _log = run(matrix, "--script", str(script(tmp_path, SKIPPY_SCRIPT)), "--good", "0.2.0",
                                "--bad", "0.1.0", "--commits", "--jax-repo", str(world.repo))
    commits = data["commits"]
    skipped_runs = [p for p in commits["probes"] if p["outcome"] == "skip" and p["key"] in commits["probed_now"]]
    assert commits["verdict"] == "short-list"
    runnable = commits["levels"][0]["candidates"] - 1  # one commit no build accepts: skipped without a run
    assert len(skipped_runs) == max(commit_search.MIN_SKIP_BUDGET, math.ceil(math.log2(runnable)))
    assert commits["levels"][0]["unprobed"] > 0  # left unrun
    assert len(commits["ambiguous"]) > 5  # the untested stretch is the short list


@pytest.fixture(scope="module")
def renamed_repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return renamed_history(tmp_path_factory.mktemp("renamed") / "jax")


def test_commits_that_cannot_import_on_the_older_build_run_on_the_newer(
        matrix: Any, renamed_repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """version.py accepts jaxlib 0.1.0 up to the release commit, but from the rename on JAX cannot import there.

    Before, those commits' ImportError read as the script's "bad" on jaxlib 0.1.0, the release tag alone was
    good, and the answer was "not in JAX's Python": a pure-Python fix, confidently mislaid.
    """
    world = make_world(renamed_repo, matrix, tmp_path, monkeypatch)
    data, _markdown, _log = run(matrix, "--script", str(script(tmp_path, SCRIPT_NOISE)), "--good", "0.2.0",
                                "--bad", "0.1.0", "--commits", "--jax-repo", str(world.repo))
    commits = data["commits"]
    assert commits["verdict"] == "commit", commits
    assert commits["first_different"]["hash"] == commit_titled(world.repo, NOISE_FIX_TITLE)
    assert commits["first_different"]["jaxlib"] == "0.2.0"
    counted = [p for p in commits["probes"] if p["outcome"] in ("good", "bad")]
    assert counted
    assert not [p for p in counted if p["jax_cannot_run"]]
    rename = commit_titled(world.repo, RENAME_TITLE)
    on_old = [p for p in commits["probes"] if p["jaxlib"] == "0.1.0" and p["outcome"] in ("good", "bad")]
    order = [c for c in _first_parent(world.repo)]
    assert on_old  # jaxlib 0.1.0 runs the commits before the rename ...
    assert all(order.index(p["commit"]) < order.index(rename) for p in on_old)  # ... and none past it
    assert commits["runnable_checks"]["pairs"] >= 2
    # The pairs that ran are kept: an identical rerun asks none again and runs nothing.
    again, _md, _log = run(matrix, "--script", str(script(tmp_path, SCRIPT_NOISE)), "--good", "0.2.0",
                           "--bad", "0.1.0", "--commits", "--jax-repo", str(world.repo))
    assert again["commits"]["probed_now"] == []
    assert again["commits"]["runnable_checks"]["pairs"] == 0
    assert again["commits"]["first_different"]["hash"] == commits["first_different"]["hash"]
    fresh, _md, _log = run(matrix, "--script", str(script(tmp_path, SCRIPT_NOISE)), "--good", "0.2.0",
                           "--bad", "0.1.0", "--commits", "--jax-repo", str(world.repo), "--fresh")
    assert fresh["commits"]["runnable_checks"]["pairs"] == commits["runnable_checks"]["pairs"]  # asked again


def test_an_import_failure_of_jax_is_never_a_verdict_nor_cached(
        matrix: Any, renamed_repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A commit probe whose JAX cannot import (here: every pair past the span, forced) is a skip, and not kept."""
    world = make_world(renamed_repo, matrix, tmp_path, monkeypatch)
    monkeypatch.setattr(commit_search, "assign_builds", lambda candidates, builds, check: list(candidates))
    data, _md, _log = run(matrix, "--script", str(script(tmp_path, SCRIPT_NOISE)), "--good", "0.2.0",
                          "--bad", "0.1.0", "--commits", "--jax-repo", str(world.repo))
    commits = data["commits"]
    skipped = [p for p in commits["probes"] if p["jax_cannot_run"]]
    assert skipped
    assert all(p["outcome"] == "skip" for p in skipped)
    assert all("No module named 'jaxlib._" in p["jax_cannot_run"] for p in skipped)
    assert commits["verdict"] != "not-in-python"  # without the spans: a short list or a stop, never a false binary
    cached = [json.loads(f.read_text()) for f in (tmp_path / "reports" / "bisect" / "probes").rglob("*.json")]
    assert not [c for c in cached if c.get("observation", c).get("jax_cannot_run")]


def test_a_python_change_that_takes_effect_only_with_the_newer_jaxlib(
        matrix: Any, renamed_repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The gate commit changes nothing on jaxlib 0.1.0 and everything on 0.2.0: that commit, with its gate named."""
    world = make_world(renamed_repo, matrix, tmp_path, monkeypatch)
    data, _markdown, _log = run(matrix, "--script", str(script(tmp_path, SCRIPT_GATE)), "--good", "0.2.0",
                                "--bad", "0.1.0", "--commits", "--jax-repo", str(world.repo))
    commits = data["commits"]
    assert commits["verdict"] == "commit-with-newer-jaxlib", commits
    assert commits["first_different"]["hash"] == commit_titled(world.repo, GATE_TITLE)
    assert commits["tie_break"]["kind"] == "build-dependent"
    assert any("jaxlib_version >= (0, 2, 0)" in gate for gate in commits["tie_break"]["gates"])
    assert commits["first_different"]["jaxlib"] == "0.2.0"  # the commit, with the newer jaxlib only


def _first_parent(repo: Path) -> list[str]:
    import subprocess

    out = subprocess.run(["git", "-C", str(repo), "rev-list", "--first-parent", "--reverse", "main"],
                         capture_output=True, text=True, check=True).stdout
    return out.split()


def test_a_commit_phase_that_stops_still_publishes_the_release_answer_first(
        matrix: Any, world: World, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from kit.errors import OverlayUnwritable

    def full(phase: Any) -> Any:
        raise OverlayUnwritable("could not make a folder for a commit's overlay in /tmp (No space left on device)")

    monkeypatch.setattr(driver, "narrow_to_commits", full)
    with pytest.raises(OverlayUnwritable):
        driver.main(matrix, ["--script", str(script(tmp_path, SCRIPT_BATCH)), "--good", "0.2.0", "--bad", "0.1.0",
                             "--commits", "--jax-repo", str(world.repo)], lambda line: None)
    published = list((tmp_path / "reports").glob("bisect-*.json"))
    assert published
    assert json.loads(published[0].read_text())["first_different"] == "0.2.0"


def test_good_and_bad_commits_start_and_end_the_commit_search_anywhere(matrix: Any, world: World, tmp_path: Path) -> None:
    # The bad commit is off the line searched (on the pull request's branch, before the fix): the search starts
    # at the newest line commit it contains and says so; the good commit ends it. The fix is still found, inside.
    prep, plugins = commit_titled(world.repo, PREP_TITLE), commit_titled(world.repo, PLUGINS_TITLE)
    data, markdown, _log = run(matrix, "--script", str(script(tmp_path, SCRIPT_BATCH)), "--good", "0.2.0",
                               "--bad", "0.1.0", "--commits", "--jax-repo", str(world.repo),
                               "--bad-commit", prep[:12], "--good-commit", plugins)
    commits = data["commits"]
    assert commits["first_different"]["title"] == FIX_TITLE
    assert commits["range"]["new_end"] == plugins
    assert commits["range"]["new"] == plugins
    assert f"{prep[:12]} is not on the line: the search starts at" in commits["range"]["shape"]
    assert f"ending at {plugins}" in commits["range"]["shape"]
    with pytest.raises(UsageError, match="is not between"):  # older than the range's old end
        run(matrix, "--script", str(script(tmp_path, SCRIPT_BATCH)), "--good", "0.2.0", "--bad", "0.1.0",
            "--commits", "--jax-repo", str(world.repo), "--bad-commit", "jax-v0.1.0~1")
    with pytest.raises(UsageError, match="is empty"):  # the ends the wrong way round
        run(matrix, "--script", str(script(tmp_path, SCRIPT_BATCH)), "--good", "0.2.0", "--bad", "0.1.0",
            "--commits", "--jax-repo", str(world.repo), "--bad-commit", plugins, "--good-commit", prep)
