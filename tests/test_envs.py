"""kit.envs: an environment is built once per plan, reused after, and rebuilt over an interrupted build."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from kit import envs
from kit.install import InstallPlan, Resolution

PLAN = InstallPlan(jax="0.6.0", backend="cpu", requirements=("jax[cpu]==0.6.0", "scipy"),
                   exclude_newer="2025-04-30T00:00:00Z", index_url="https://example.invalid/simple",
                   pythons=("3.11",))
RESOLUTION = Resolution("3.11", ok=True, pins={"jax": "0.6.0", "jaxlib": "0.6.0"})


class FakeBackend:
    """Makes an 'environment' whose python is this interpreter, and counts the builds."""

    name = "fake"

    def __init__(self) -> None:
        self.built: list[Path] = []

    def create(self, path: Path, interpreter: Path) -> None:
        python = envs.env_python(path)
        python.parent.mkdir(parents=True)
        python.symlink_to(sys.executable)

    def install(self, path: Path, plan: InstallPlan, resolution: Resolution) -> None:
        self.built.append(path)


@pytest.fixture(autouse=True)
def any_python_is_installed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(envs, "find_interpreter", lambda version: Path(sys.executable))


def test_built_once_then_reused(tmp_path: Path) -> None:
    backend, lines = FakeBackend(), []
    first = envs.ensure_env(tmp_path, PLAN, RESOLUTION, backend, lines.append)
    again = envs.ensure_env(tmp_path, PLAN, RESOLUTION, backend, lines.append)
    assert (first.reused, again.reused) == (False, True)
    assert again.path == first.path and again.pins == RESOLUTION.pins
    assert len(backend.built) == 1


def test_an_interrupted_build_without_its_marker_is_rebuilt(tmp_path: Path) -> None:
    backend = FakeBackend()
    env = envs.ensure_env(tmp_path, PLAN, RESOLUTION, backend, lambda m: None)
    (env.path / "kit-env.json").unlink()  # as if killed before the install finished
    rebuilt = envs.ensure_env(tmp_path, PLAN, RESOLUTION, backend, lambda m: None)
    assert not rebuilt.reused and len(backend.built) == 2


def test_a_failing_installer_raises_its_last_words(tmp_path: Path) -> None:
    with pytest.raises(envs.InstallFailed, match="boom"):
        envs._run([sys.executable, "-c", "import sys; sys.exit('boom')"])


def test_a_missing_python_is_an_install_failure(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(envs, "find_interpreter", lambda version: None)
    with pytest.raises(envs.InstallFailed, match="Python 3.11 is not installed here"):
        envs.ensure_env(tmp_path, PLAN, RESOLUTION, FakeBackend(), lambda m: None)


def test_interpreters_are_found_under_pyenv_newest_patch_first(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.undo()  # the real find_interpreter
    for patch in ("3.11.2", "3.11.10"):
        python = tmp_path / "versions" / patch / "bin" / "python"
        python.parent.mkdir(parents=True)
        python.write_text("#!/bin/sh\n")
        os.chmod(python, 0o755)
    monkeypatch.setenv("PYENV_ROOT", str(tmp_path))
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    assert envs.find_interpreter("3.11") == tmp_path / "versions" / "3.11.10" / "bin" / "python"
    assert envs.find_interpreter("3.7") is None
