"""kit.install.envs: an environment is built once per plan, reused after, and rebuilt over an interrupted build."""

from __future__ import annotations

import json
import os
import shutil
import sys
import threading
import time
from pathlib import Path
from typing import Callable

import pytest

from kit.install import envs, installed
from kit.install.plan import InstallPlan, Resolution
from tests.fake_repro import write_installed

PLAN = InstallPlan(jax="0.6.0", backend="cpu", requirements=("jax[cpu]==0.6.0", "scipy"),
                   exclude_newer="2025-04-30T00:00:00Z", index_url="https://example.invalid/simple",
                   pythons=("3.11",))
RESOLUTION = Resolution("3.11", ok=True, versions={"jax": "0.6.0", "jaxlib": "0.6.0"})


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
        write_installed(path, resolution.versions)
        self.built.append(path)


@pytest.fixture(autouse=True)
def any_python_is_installed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(envs, "find_interpreter", lambda version: Path(sys.executable))


def test_built_once_then_reused(tmp_path: Path) -> None:
    backend, lines = FakeBackend(), []
    first = envs.ensure_env(tmp_path, PLAN, RESOLUTION, backend, lines.append)
    again = envs.ensure_env(tmp_path, PLAN, RESOLUTION, backend, lines.append)
    assert (first.reused, again.reused) == (False, True)
    assert again.path == first.path
    assert again.versions == RESOLUTION.versions
    assert len(backend.built) == 1


def test_an_environment_whose_marker_names_its_versions_pins_is_reused(tmp_path: Path) -> None:
    """The marker of an environment built before the resolved versions were ``versions`` calls them ``pins``."""
    backend = FakeBackend()
    env = envs.ensure_env(tmp_path, PLAN, RESOLUTION, backend, lambda m: None)
    marker = env.path / "kit-env.json"
    assert json.loads(marker.read_text())["versions"] == RESOLUTION.versions
    marker.write_text(json.dumps({"plan": PLAN.to_json(), "python": "3.11", "pins": RESOLUTION.versions}))
    again = envs.ensure_env(tmp_path, PLAN, RESOLUTION, backend, lambda m: None)
    assert again.reused
    assert again.versions == RESOLUTION.versions
    assert len(backend.built) == 1


def test_an_interrupted_build_without_its_marker_is_rebuilt(tmp_path: Path) -> None:
    backend = FakeBackend()
    env = envs.ensure_env(tmp_path, PLAN, RESOLUTION, backend, lambda m: None)
    (env.path / "kit-env.json").unlink()  # as if killed before the install finished
    rebuilt = envs.ensure_env(tmp_path, PLAN, RESOLUTION, backend, lambda m: None)
    assert not rebuilt.reused
    assert len(backend.built) == 2


def test_an_environment_built_with_other_versions_than_its_resolution_is_rebuilt(tmp_path: Path) -> None:
    """The folder is named by the plan alone: a lock resolved again with another version (optax 0.2.3 found wrong,
    0.2.4 now) must not reuse what the old answer installed."""
    backend, lines = FakeBackend(), []
    first = envs.ensure_env(tmp_path, PLAN, RESOLUTION, backend, lines.append)
    newer = Resolution("3.11", ok=True, versions={"jax": "0.6.0", "jaxlib": "0.6.0", "scipy": "1.15.2"})
    rebuilt = envs.ensure_env(tmp_path, PLAN, newer, backend, lines.append)
    assert rebuilt.path == first.path
    assert not rebuilt.reused
    assert rebuilt.versions == newer.versions
    assert len(backend.built) == 2
    assert f"environment {first.path} holds other versions than its resolution (scipy None, now 1.15.2): building it again" in lines


def test_an_environment_missing_a_pinned_package_is_rebuilt_and_says_why(tmp_path: Path) -> None:
    backend, lines = FakeBackend(), []
    env = envs.ensure_env(tmp_path, PLAN, RESOLUTION, backend, lines.append)
    shutil.rmtree(env.path / "lib" / "python3.11" / "site-packages" / "jax")  # moved out by hand
    rebuilt = envs.ensure_env(tmp_path, PLAN, RESOLUTION, backend, lines.append)
    assert not rebuilt.reused
    assert len(backend.built) == 2
    assert (f"environment {env.path} no longer holds what it installed (site-packages/jax, listed in jax 0.6.0's "
            "RECORD, is missing): building it again") in lines
    assert envs.finished_env(env.path) is not None


def test_an_environment_missing_a_dist_info_is_not_finished(tmp_path: Path) -> None:
    env = envs.ensure_env(tmp_path, PLAN, RESOLUTION, FakeBackend(), lambda m: None)
    shutil.rmtree(env.path / "lib" / "python3.11" / "site-packages" / "jaxlib-0.6.0.dist-info")
    assert envs.finished_env(env.path) is None
    assert installed.missing_from(env.path, RESOLUTION.versions) == (
        "jaxlib 0.6.0 has no jaxlib-0.6.0.dist-info in site-packages")


def test_a_failing_installer_raises_its_last_words(tmp_path: Path) -> None:
    with pytest.raises(envs.InstallFailed, match="boom"):
        envs._run([sys.executable, "-c", "import sys; sys.exit('boom')"])


def fake_uv(tmp_path: Path, find: str, install: str) -> str:
    """A uv whose `python find` and `python install` run the given shell lines."""
    uv = tmp_path / "uv"
    uv.write_text(f'#!/bin/sh\ncase "$2" in find) {find} ;; install) {install} ;; esac\n')
    uv.chmod(0o755)
    return str(uv)


def test_a_python_nobody_can_supply_names_itself_and_the_command(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(envs, "find_interpreter", lambda version: None)
    # uv's words when no build of that Python exists for this platform (a network fault is exit 4 instead:
    # tests/faults/test_local_faults.py).
    uv = fake_uv(tmp_path, "exit 2", "echo 'error: No download found for request: cpython-3.11-linux-riscv64-gnu' >&2; "
                                     "exit 1")
    monkeypatch.setattr(envs, "find_uv", lambda: uv)
    with pytest.raises(envs.InstallFailed) as failed:
        envs.ensure_env(tmp_path, PLAN, RESOLUTION, FakeBackend(), lambda m: None)
    assert str(failed.value) == (
        "this release needs Python 3.11, which is not installed here, and uv could not download it (error: No "
        "download found for request: cpython-3.11-linux-riscv64-gnu); "
        "install it with `uv python install 3.11` or `pyenv install 3.11`, then run again")


def test_a_python_uv_manages_is_used(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(envs, "find_interpreter", lambda version: None)
    marker = tmp_path / "installed"
    uv = fake_uv(tmp_path, f"test -e {marker} && echo {sys.executable} || exit 2", f"touch {marker}")
    monkeypatch.setattr(envs, "find_uv", lambda: uv)
    lines: list[str] = []
    assert envs.find_or_fetch_interpreter("3.11", lines.append) == Path(sys.executable)
    assert lines == ["Python 3.11 is not installed here; asking uv for a managed one (uv python install 3.11)"]


def test_a_second_builder_waits_for_the_first_then_reuses(tmp_path: Path) -> None:
    started, release = threading.Event(), threading.Event()

    class SlowBackend(FakeBackend):
        def install(self, path: Path, plan: InstallPlan, resolution: Resolution) -> None:
            started.set()
            assert release.wait(10)
            super().install(path, plan, resolution)

    backend, first_lines, second_lines = SlowBackend(), [], []
    first = threading.Thread(target=envs.ensure_env, args=(tmp_path, PLAN, RESOLUTION, backend, first_lines.append))
    first.start()
    assert started.wait(10)
    second: list[envs.Env] = []
    waiter = threading.Thread(target=lambda: second.append(
        envs.ensure_env(tmp_path, PLAN, RESOLUTION, backend, second_lines.append)))
    waiter.start()
    # The second builder says it waits on the lock (and must not touch the half-built folder meanwhile).
    assert eventually(lambda: any("waiting for another process that is building" in line for line in second_lines))
    assert not backend.built
    assert waiter.is_alive()
    release.set()
    first.join(10)
    waiter.join(10)
    assert second[0].reused
    assert len(backend.built) == 1


def eventually(condition: Callable[[], bool], within_s: float = 10.0) -> bool:
    """Poll ``condition`` until it holds or ``within_s`` passes: no guess at how fast a loaded machine is."""
    deadline = time.monotonic() + within_s
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True


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


def test_uv_installs_the_locked_hashes_when_every_pin_has_them(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    commands: list[list[str]] = []
    monkeypatch.setattr(envs, "_run", lambda command, folder=None: commands.append(command))
    hashed = Resolution("3.11", ok=True, versions={"jax": "0.6.0", "jaxlib": "0.6.0"},
                        hashes={"jax": ("sha256:aa",), "jaxlib": ("sha256:bb", "sha256:cc")})
    envs.UvBackend("uv").install(tmp_path, PLAN, hashed)
    assert commands[-1][-3:] == ["--require-hashes", "-r", str(tmp_path / "kit-requirements.txt")]
    assert (tmp_path / "kit-requirements.txt").read_text().splitlines() == [
        "jax==0.6.0 --hash=sha256:aa", "jaxlib==0.6.0 --hash=sha256:bb --hash=sha256:cc"]
    envs.UvBackend("uv").install(tmp_path, PLAN, RESOLUTION)  # no hashes (a find-links plan): pins alone
    assert commands[-1][-2:] == ["jax==0.6.0", "jaxlib==0.6.0"]


def test_an_environment_knows_its_full_python_version_from_pyvenv_cfg(tmp_path: Path) -> None:
    # uv writes version_info, the standard venv writes version; a script check's record quotes it.
    uv_env = tmp_path / "uv"
    uv_env.mkdir()
    (uv_env / "pyvenv.cfg").write_text("home = /x/bin\nimplementation = CPython\nuv = 0.13.9\nversion_info = 3.13.0\n")
    venv_env = tmp_path / "venv"
    venv_env.mkdir()
    (venv_env / "pyvenv.cfg").write_text("home = /x/bin\ninclude-system-site-packages = false\nversion = 3.9.18\n")
    assert envs.Env(uv_env, uv_env / "bin/python", False, {}).python_version() == "3.13.0"
    assert envs.Env(venv_env, venv_env / "bin/python", False, {}).python_version() == "3.9.18"
    assert envs.Env(tmp_path / "gone", tmp_path / "gone/bin/python", False, {}).python_version() is None
