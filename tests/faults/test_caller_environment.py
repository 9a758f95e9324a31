"""The caller's environment variables do not decide a release's verdict.

A user's PYTHONPATH holding a ``jax`` package once made every release run the
user's jax while the record said jax 0.6.0. docs/faults.md, "Untrusted input
and the kit's folders".
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from kit.install import overlay
from kit.install.environment import EXISTING, Environment
from kit.run import child_processes, runner
from tests.faults.script_checks import prepared_here, script_matrix

# Exit 1 (affected) when anything of the caller's PYTHONPATH is importable.
SEES_THE_CALLERS_PATH = ("import importlib.util, sys\n"
                         "sys.exit(1 if importlib.util.find_spec('callers_package') else 0)\n")


@pytest.fixture
def callers_pythonpath(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "mine"
    (folder / "callers_package").mkdir(parents=True)
    (folder / "callers_package" / "__init__.py").write_text("")
    monkeypatch.setenv("PYTHONPATH", str(folder))
    return folder


def test_a_release_environment_runs_without_the_callers_pythonpath_and_says_so(
        tmp_path: Path, callers_pythonpath: Path) -> None:
    script = tmp_path / "hostile.py"
    script.write_text(SEES_THE_CALLERS_PATH)
    lines: list[str] = []
    record, _path = runner.run_check(script_matrix(tmp_path, script), runner.RunRequest("hostile", "0.6.0"),
                                     lines.append, prepared=prepared_here(tmp_path))
    assert (record["status"], record["verdict"]) == ("ran", "unaffected"), record["reason"]
    assert ("PYTHONPATH is set here: the release's environment runs without it, so the release's own jax and "
            "packages are the ones imported (an interpreter given with --python keeps it)") in lines


def test_a_users_own_interpreter_keeps_the_callers_pythonpath(callers_pythonpath: Path) -> None:
    env = Environment(Path(sys.executable), {"jax": "0.6.0"}, EXISTING)
    assert env.isolating_env() == {}, "run as it is: a cluster's JAX module may live on PYTHONPATH"


def test_pythonoptimize_does_not_turn_an_assert_based_check_unaffected(tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYTHONOPTIMIZE", "1")
    script = tmp_path / "hostile.py"
    script.write_text("assert 1 + 1 == 3, 'the bug is here'\n")
    lines: list[str] = []
    record, _path = runner.run_check(script_matrix(tmp_path, script), runner.RunRequest("hostile", "0.6.0"),
                                     lines.append, prepared=prepared_here(tmp_path))
    assert (record["status"], record["verdict"]) == ("ran", "affected"), record["reason"]
    assert "PYTHONOPTIMIZE is set here: checks run without it, since a check's asserts decide its verdict" in lines


def test_a_pythonpath_of_the_repository_alone_is_not_the_callers_own(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYTHONPATH", str(child_processes.REPO_ROOT))  # as `python -m kit` is often started
    monkeypatch.delenv("PYTHONOPTIMIZE", raising=False)
    assert child_processes.dropped_variables({"PYTHONPATH": ""}) == []


def test_a_commit_overlay_finds_the_builds_jaxlib_not_one_on_the_callers_pythonpath(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    mine = tmp_path / "mine"
    (mine / "json").mkdir(parents=True)  # a package of the standard library's name, shadowing it for the caller
    (mine / "json" / "__init__.py").write_text("")
    monkeypatch.setenv("PYTHONPATH", str(mine))
    found = overlay.installed_package.__wrapped__(Path(sys.executable), "json")  # unmemoised: asked afresh
    assert found.parent != mine and found.name == "json", found
