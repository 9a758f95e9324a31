"""kit.install.overlay: a commit's Python laid over a built environment, as a whole jaxlib package."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from fake_jax import FIX_TITLE, PLUGINS_TITLE, PREP_TITLE, commit_titled, fake_env, make_repo
from kit.history.source import History
from kit.history.version_file import JaxlibRange
from kit.install.environment import REUSED, Environment
from kit.install.overlay import Build, choose_build, commit_version, installed_package, lay_over

A = Build("0.5.2", "0.5.1", "3.13", True, "bad")
B = Build("0.5.3", "0.5.3", "3.13", True, "good")
B_UNBUILT = Build("0.5.3", "0.5.3", "3.13", False, "good")


@pytest.mark.parametrize(("accepted", "builds", "chosen", "why"), [
    (JaxlibRange("0.5.1", "0.5.2"), [A, B], A, ""),  # only the old jaxlib fits
    (JaxlibRange("0.5.1", "0.5.3"), [A, B], A, ""),  # both fit: the first (the bad side's)
    (JaxlibRange("0.5.1", "0.5.3"), [B, A], B, ""),
    (JaxlibRange("0.5.3", "0.5.3"), [A, B], B, ""),  # the release commit raised the minimum
    (JaxlibRange("0.5.1", "0.5.3"), [B_UNBUILT, A], A, ""),  # a built one before one to build
    (JaxlibRange("0.5.3", "0.5.3"), [A, B_UNBUILT], B_UNBUILT, ""),  # none built fits: that one gets built
    (JaxlibRange("0.5.2", "0.5.2"), [A, B], None, "needs jaxlib >= 0.5.2 and <= 0.5.2; the builds at hand are jaxlib 0.5.1, jaxlib 0.5.3"),
    (None, [A, B], None, "names no jaxlib range"),
])
def test_choose_build(accepted: JaxlibRange | None, builds: list[Build], chosen: Build | None, why: str) -> None:
    got, reason = choose_build(accepted, builds)
    assert got == chosen and why in reason and bool(reason) == (chosen is None)


def test_commit_version_names_the_commit() -> None:
    assert commit_version(JaxlibRange("0.5.1", "0.5.2"), "2025-02-27T08:15:45-08:00",
                          "f93c2a1aa51d0d124bf0632eacbe95c261dacd57") == "0.5.2.dev20250227+f93c2a1aa5"


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> tuple[History, Environment]:
    root = tmp_path_factory.mktemp("overlay")
    repo = make_repo(root / "jax")
    env = fake_env(root, repo, "0.1.0")
    (installed_package(env / "bin" / "python", "jaxlib") / "__pycache__").mkdir()  # as after any import
    return History(repo, "test"), Environment(env / "bin" / "python", {"jax": "0.1.0", "jaxlib": "0.1.0"}, REUSED)


def run(environment: Environment, code: str) -> str:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(str(p) for p in environment.pythonpath)}
    return subprocess.run([str(environment.python), "-c", code], env=env, capture_output=True, text=True,
                          check=True).stdout.strip()


def test_the_commits_jax_and_jaxlib_python_are_what_imports(world: tuple[History, Environment],
                                                            tmp_path: Path) -> None:
    history, base = world
    fix = commit_titled(history.path, FIX_TITLE)
    laid = lay_over(history, fix, base, tmp_path, "0.1.0.dev20250110+fix")
    assert laid.pythonpath == (tmp_path,) and laid.pins["jax"] == "0.1.0.dev20250110+fix"
    assert laid.pins["jaxlib"] == "0.1.0" and laid.python == base.python
    out = run(laid, "import jax, jaxlib.lapack, jaxlib.version as v; "
                    "print(jax.__version__, jax.__file__, jaxlib.lapack.__file__, v.__version__, jax.batch_sharded())")
    version, jax_file, lapack_file, jaxlib_version, fixed = out.split()
    assert version == "0.1.0.dev20250110+fix" and jax_file.startswith(str(tmp_path))
    assert lapack_file.startswith(str(tmp_path)) and jaxlib_version == "0.1.0"  # the binary names itself
    assert fixed == "True"  # needs the commit's jaxlib/lapack.py too: jax/ alone would say False


def test_the_overlay_is_a_whole_jaxlib_package(world: tuple[History, Environment], tmp_path: Path) -> None:
    history, base = world
    lay_over(history, commit_titled(history.path, PREP_TITLE), base, tmp_path, "0.1.0.dev")
    jaxlib = tmp_path / "jaxlib"
    assert (jaxlib / "_kernels.py").is_symlink() and (jaxlib / "version.py").is_symlink()  # the build's own
    assert not (jaxlib / "lapack.py").is_symlink()  # the commit's
    assert not (jaxlib / "kernels.cc").exists()  # compiled sources are the build's business
    assert not (jaxlib / "__pycache__").exists()  # bytecode of the commit's files stays out of the env
    assert not (jaxlib / "BUILD").exists()


def test_a_jaxlib_module_new_in_the_commit_is_laid_over_too(world: tuple[History, Environment],
                                                             tmp_path: Path) -> None:
    history, base = world
    laid = lay_over(history, commit_titled(history.path, PLUGINS_TITLE), base, tmp_path, "0.1.0.dev")
    assert (tmp_path / "jaxlib" / "plugin_support.py").is_file()  # jaxlib 0.1.0 has no such module
    assert run(laid, "import jax._src.kernels, jaxlib.plugin_support as p; print(p.PLUGINS)") == "()"
