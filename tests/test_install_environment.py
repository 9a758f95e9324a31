"""kit.install.environment: the one answer to "how does this run get its Python"."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from kit.config import parse_matrix
from kit.errors import UsageError
from kit.install import environment, envs, lockfile, plan as install
from kit.install.plan import InstallPlan, Resolution
from tests.fake_index import refused_url


class LinkBackend:
    """An 'environment' whose python is this interpreter."""

    name = "link"

    def create(self, path: Path, interpreter: Path) -> None:
        envs.env_python(path).parent.mkdir(parents=True)
        envs.env_python(path).symlink_to(sys.executable)

    def install(self, path: Path, plan: InstallPlan, resolution: Resolution) -> None:
        pass


def test_a_built_release_goes_straight_to_its_environment_with_the_index_down(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    matrix = parse_matrix({"kit": {"results_dir": str(tmp_path / "results"), "envs_dir": str(tmp_path / "envs")},
                           "install": {"index_url": refused_url()},
                           "release": [{"version": "0.6.0"}], "checks": {"scaling": {}}}, tmp_path / "matrix.toml")
    plan = InstallPlan(jax="0.6.0", backend="cpu", requirements=("jax[cpu]==0.6.0", "scipy"),
                       exclude_newer="2025-04-30T00:00:00Z", index_url=matrix.install.index_url, pythons=("3.11",))
    resolution = Resolution("3.11", ok=True, pins={"jax": "0.6.0", "jaxlib": "0.6.0"})
    monkeypatch.setattr(envs, "find_interpreter", lambda version: Path(sys.executable))
    built = envs.ensure_env(matrix.envs_dir, plan, resolution, LinkBackend(), lambda m: None)
    lockfile.write_lock(matrix.envs_dir, lockfile.install_settings(matrix, matrix.release("0.6.0"), "cpu"),
                        plan, resolution)
    monkeypatch.setattr(install, "resolve", lambda *a, **k: pytest.fail("uv was asked"))
    lines: list[str] = []
    prepared = environment.prepare(matrix, "0.6.0", "cpu", lines.append)
    assert prepared.environment is not None and prepared.environment.reused
    assert prepared.environment.python == built.python and prepared.environment.pythonpath == ()
    assert prepared.resolution == resolution and prepared.plan == plan
    assert "as locked in" in lines[0]


def test_a_release_s_built_environment_is_the_value_the_runner_consumes(tmp_path: Path) -> None:
    (tmp_path / "bin").mkdir()
    (tmp_path / "pyvenv.cfg").write_text("home = /usr/bin\nversion_info = 3.12.4\n")
    built = envs.Env(tmp_path, tmp_path / "bin" / "python", reused=False, pins={"jax": "0.6.0"})
    made = environment.release_environment(built)
    assert (made.python, dict(made.pins), made.obtained, made.pythonpath, made.python_version) == (
        tmp_path / "bin" / "python", {"jax": "0.6.0"}, environment.BUILT, (), "3.12.4")
    assert not made.reused


def test_cuda_without_a_gpu_stops_before_anything_is_resolved(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    matrix = parse_matrix({"kit": {"envs_dir": str(tmp_path / "envs")}, "release": [{"version": "0.6.0"}],
                           "checks": {"scaling": {}}}, tmp_path / "matrix.toml")
    monkeypatch.setattr(environment.shutil, "which", lambda name: None)
    monkeypatch.delenv("KIT_ALLOW_NO_GPU", raising=False)
    monkeypatch.setattr(environment, "resolve_release", lambda *a, **k: pytest.fail("resolved"))
    with pytest.raises(UsageError, match="no NVIDIA GPU is visible here"):
        environment.prepare(matrix, "0.6.0", "cuda", lambda m: None)
