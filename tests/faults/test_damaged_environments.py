"""A built environment damaged since it was built: rebuilt before it runs, never a verdict.

A finished environment is reused only while it still holds what its lock
names (`kit.install.installed`); one whose ``site-packages/jax`` was moved out
would run ``import jax`` into "No module named 'jax'", and the record would
blame the release. docs/faults.md, "Environments".
"""

from __future__ import annotations

import shutil
from typing import Callable

from kit.install import envs
from kit.install.release import built_env
from kit.run import runner
from kit.install.key import InstallKey
from tests.fake_releases import FakeReleases


def test_an_environment_missing_its_jax_is_built_again_before_the_check_runs(
        fake_releases: Callable[..., FakeReleases]) -> None:
    machine = fake_releases(["0.6.0"])
    built = built_env(machine.matrix, "0.6.0", InstallKey("cpu"))
    assert built is not None
    shutil.move(str(built.path / "lib" / "python3.11" / "site-packages" / "jax"), str(machine.folder / "moved-jax"))
    assert built_env(machine.matrix, "0.6.0", InstallKey("cpu")) is None, "a damaged environment is not a built one"
    lines: list[str] = []
    record, _path = runner.run_check(machine.matrix, runner.RunRequest("scaling", "0.6.0"), lines.append)
    assert (f"environment {built.path} no longer holds what it installed (site-packages/jax, listed in jax 0.6.0's "
            "RECORD, is missing): building it again") in lines
    assert record["status"] == "ran"
    assert record["verdict"] == "unaffected"
    assert record["install"]["environment"] == "built"
    assert envs.finished_env(built.path) is not None
