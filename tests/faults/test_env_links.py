"""A link where an environment goes: refused before anything is deleted; a linked envs folder still works.

The kit rebuilds a half-built or damaged environment by deleting its folder and
locks beside it, so a link at an environment's path (``.nox/jax-envs/jax-0.6.0-...``
pointing elsewhere) once had its target deleted, outside ``.nox``. docs/faults.md,
"Environments and history".
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path
from typing import Callable

import pytest

from kit.errors import StorageError
from kit.install import envs
from kit.install.key import InstallKey
from kit.install.release import built_env
from kit.run import runner
from tests.fake_releases import FakeReleases
from kit.install.plan import InstallPlan, Resolution
from tests.fake_repro import write_installed

PLAN = InstallPlan(jax="0.6.0", backend="cpu", requirements=("jax[cpu]==0.6.0",), exclude_newer="2025-04-30T00:00:00Z",
                   index_url="https://example.invalid/simple", pythons=("3.11",))
RESOLUTION = Resolution("3.11", ok=True, versions={"jax": "0.6.0", "jaxlib": "0.6.0"})


class FakeBackend:
    """An 'environment' whose python is this interpreter and whose packages are their dist-infos."""

    name = "fake"

    def create(self, path: Path, interpreter: Path) -> None:
        envs.env_python(path).parent.mkdir(parents=True)
        envs.env_python(path).symlink_to(sys.executable)

    def install(self, path: Path, plan: InstallPlan, resolution: Resolution) -> None:
        write_installed(path, resolution.versions)


def test_a_link_at_an_environments_path_is_refused_and_its_target_left_whole(
        fake_releases: Callable[..., FakeReleases], tmp_path: Path) -> None:
    machine = fake_releases(["0.6.0"])
    built = built_env(machine.matrix, "0.6.0", InstallKey("cpu"))
    assert built is not None
    elsewhere = tmp_path / "elsewhere"
    shutil.move(str(built.path), str(elsewhere))
    (elsewhere / "kit-env.json").unlink()  # looks half-built: the kit would rebuild it, deleting the folder first
    (elsewhere / "precious.txt").write_text("a user's file")
    built.path.symlink_to(elsewhere, target_is_directory=True)
    with pytest.raises(StorageError, match=r"the environment path .*jax-0\.6\.0-.* leads outside .* \(to .*elsewhere\)"
                                           r": the kit builds, rebuilds and deletes environments only inside") as caught:
        runner.run_check(machine.matrix, runner.RunRequest("scaling", "0.6.0"), lambda line: None)
    assert caught.value.exit_code == 1
    assert caught.value.tip.startswith(f"remove the link (rm {built.path})")
    assert (elsewhere / "precious.txt").read_text() == "a user's file"
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith("elsewhere")) == ["elsewhere"], "no lock"
    assert list(machine.matrix.results_dir.glob("*.json")) == [], "a local fault is no record"


def test_an_envs_folder_that_is_itself_a_link_builds_and_reuses_inside_it(tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(envs, "find_interpreter", lambda version: Path(sys.executable))
    real = tmp_path / "real-envs"
    real.mkdir()
    linked = tmp_path / "jax-envs"
    linked.symlink_to(real, target_is_directory=True)
    first = envs.ensure_env(linked, PLAN, RESOLUTION, FakeBackend(), lambda line: None)
    again = envs.ensure_env(linked, PLAN, RESOLUTION, FakeBackend(), lambda line: None)
    assert first.path.parent == real
    assert not first.reused
    assert again.reused


def test_a_link_at_an_environments_lock_is_refused_and_its_target_left_whole(tmp_path: Path) -> None:
    envs_dir = tmp_path / "envs"
    envs_dir.mkdir()
    precious = tmp_path / "precious.txt"
    precious.write_text("a user's file")
    lock = envs.env_path(envs_dir, PLAN, RESOLUTION).with_name(envs.env_path(envs_dir, PLAN, RESOLUTION).name + ".lock")
    lock.symlink_to(precious)
    with pytest.raises(StorageError, match=r"\.lock leads outside .* \(to .*precious\.txt\)"):
        envs.ensure_env(envs_dir, PLAN, RESOLUTION, FakeBackend(), lambda line: None)
    assert precious.read_text() == "a user's file", "not truncated by opening the lock"
