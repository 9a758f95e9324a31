"""kit.install.overlay: a commit's Python laid over a built environment, as a whole jaxlib package."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from fake_jax import FIX_TITLE, PLUGINS_TITLE, PREP_TITLE, UNRUNNABLE_TITLE, commit_titled, fake_env, make_repo
from kit.history.source import History
from kit.history.version_file import JaxlibRange
from kit.install.environment import REUSED, Environment, overlaid
from kit.install.overlay import JAX_ALONE, commit_version, declare_the_build, installed_package, lay_over

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
    lay_over(history, fix, base.python, tmp_path, "0.1.0.dev20250110+fix")
    laid = overlaid(base, tmp_path, "0.1.0.dev20250110+fix")
    assert laid.pythonpath == (tmp_path,)
    assert laid.versions["jax"] == "0.1.0.dev20250110+fix"
    assert laid.versions["jaxlib"] == "0.1.0"
    assert laid.python == base.python
    out = run(laid, "import jax, jaxlib.lapack, jaxlib.version as v; "
                    "print(jax.__version__, jax.__file__, jaxlib.lapack.__file__, v.__version__, jax.batch_sharded())")
    version, jax_file, lapack_file, jaxlib_version, fixed = out.split()
    assert version == "0.1.0.dev20250110+fix"
    assert jax_file.startswith(str(tmp_path))
    assert lapack_file.startswith(str(tmp_path))
    assert jaxlib_version == "0.1.0"  # the binary names itself
    assert fixed == "True"  # needs the commit's jaxlib/lapack.py too: jax/ alone would say False


def test_the_overlay_is_a_whole_jaxlib_package(world: tuple[History, Environment], tmp_path: Path) -> None:
    history, base = world
    lay_over(history, commit_titled(history.path, PREP_TITLE), base.python, tmp_path, "0.1.0.dev")
    jaxlib = tmp_path / "jaxlib"
    assert (jaxlib / "_kernels.py").is_symlink()
    assert (jaxlib / "version.py").is_symlink()  # the build's own
    assert not (jaxlib / "lapack.py").is_symlink()  # the commit's
    assert not (jaxlib / "kernels.cc").exists()  # compiled sources are the build's business
    assert not (jaxlib / "__pycache__").exists()  # bytecode of the commit's files stays out of the env
    assert not (jaxlib / "BUILD").exists()


def test_a_jaxlib_module_new_in_the_commit_is_laid_over_too(world: tuple[History, Environment],
                                                             tmp_path: Path) -> None:
    history, base = world
    lay_over(history, commit_titled(history.path, PLUGINS_TITLE), base.python, tmp_path, "0.1.0.dev")
    laid = overlaid(base, tmp_path, "0.1.0.dev")
    assert (tmp_path / "jaxlib" / "plugin_support.py").is_file()  # jaxlib 0.1.0 has no such module
    assert run(laid, "import jax._src.kernels, jaxlib.plugin_support as p; print(p.PLUGINS)") == "()"


def _jaxlib_tree(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root


def test_the_binarys_declarations_are_the_builds_and_the_rest_of_the_file_the_commits(tmp_path: Path) -> None:
    # A 2026 commit's xla_client.py says 395 over a binary whose own file says 391: JAX would take paths
    # the binary lacks (weakref_lru_cache() with arguments it does not know) and the commit would look unrunnable.
    installed = _jaxlib_tree(tmp_path / "site" / "jaxlib", {
        "xla_client.py": "_version = 391  # the build's\nmlir_api_version = 57\nOLD = 1\n"})
    overlay = _jaxlib_tree(tmp_path / "overlay" / "jaxlib", {
        "xla_client.py": "import os\n_version: int = 395  # a new kwarg\nmlir_api_version = 58\nNEW = 2\n"})
    declare_the_build(overlay, installed)
    laid = (overlay / "xla_client.py").read_text()
    namespace: dict[str, object] = {}
    exec(laid, namespace)  # noqa: S102 - the file written, as Python reads it
    assert (namespace["_version"], namespace["mlir_api_version"]) == (391, 57)
    assert namespace["NEW"] == 2
    assert "OLD" not in namespace  # the commit's Python around the extension stays
    assert "the commit said 395" in laid


def test_a_declaration_the_build_does_not_make_leaves_the_builds_whole_file(tmp_path: Path) -> None:
    installed = _jaxlib_tree(tmp_path / "site" / "jaxlib", {"xla_client.py": "OLD = 1\n"})
    overlay = _jaxlib_tree(tmp_path / "overlay" / "jaxlib", {"xla_client.py": "_version = 395\nNEW = 2\n",
                                                             "xla/xla_client.py": "_version = 395\n"})
    declare_the_build(overlay, installed)
    assert (overlay / "xla_client.py").resolve() == (installed / "xla_client.py").resolve()
    assert (overlay / "xla" / "xla_client.py").resolve() == (installed / "xla_client.py").resolve()


def test_a_file_that_declares_nothing_is_left_as_the_commit_wrote_it(tmp_path: Path) -> None:
    installed = _jaxlib_tree(tmp_path / "site" / "jaxlib", {"xla_client.py": "_version = 391\n"})
    overlay = _jaxlib_tree(tmp_path / "overlay" / "jaxlib", {"xla_client.py": "from jaxlib.xla.xla_client import *\n"})
    declare_the_build(overlay, installed)
    assert (overlay / "xla_client.py").read_text() == "from jaxlib.xla.xla_client import *\n"


def test_jax_alone_lays_no_jaxlib_and_the_builds_jaxlib_python_is_what_imports(world: tuple[History, Environment],
                                                                                tmp_path: Path) -> None:
    # The smallest overlay (issue 49): a commit whose jaxlib Python the build cannot run still runs its jax/.
    history, base = world
    fix = commit_titled(history.path, FIX_TITLE)
    lay_over(history, fix, base.python, tmp_path, "0.1.0.dev20250110+fix", JAX_ALONE)
    assert not (tmp_path / "jaxlib").exists()
    laid = overlaid(base, tmp_path, "0.1.0.dev20250110+fix")
    out = run(laid, "import jax, jaxlib.lapack; print(jax.__version__, jax.__file__, jaxlib.lapack.__file__, "
                    "jax.batch_sharded())")
    version, jax_file, lapack_file, fixed = out.split()
    assert version == "0.1.0.dev20250110+fix"
    assert jax_file.startswith(str(tmp_path))
    assert not lapack_file.startswith(str(tmp_path))  # the build's own jaxlib Python
    assert fixed == "False"  # the fix's jaxlib/lapack.py half is not there: why WITH_JAXLIB is laid first


def test_a_forced_probe_below_the_commits_minimum_stamps_the_builds_version_as_it(
        world: tuple[History, Environment], tmp_path: Path) -> None:
    # The crossed pair's four probes (issue 49): a commit that asks for jaxlib >= 0.1.5 forced onto 0.1.0.
    history, base = world
    asks_more = commit_titled(history.path, UNRUNNABLE_TITLE)
    refused, forced = tmp_path / "refused", tmp_path / "forced"
    lay_over(history, asks_more, base.python, refused, "0.1.0.dev")
    lay_over(history, asks_more, base.python, forced, "0.1.0.dev", minimum="0.1.0")
    env = {**os.environ, "PYTHONPATH": str(refused)}
    assert subprocess.run([str(base.python), "-c", "import jax"], env=env, capture_output=True).returncode != 0
    assert run(overlaid(base, forced, "0.1.0.dev"), "import jax.version as v; print(v._minimum_jaxlib_version)") \
        == "0.1.0"
