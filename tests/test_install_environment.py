"""kit.install.environment: the one answer to "how does this run get its Python"."""

from __future__ import annotations

import sys
from datetime import datetime, timezone
from pathlib import Path

import pytest

from kit.config import parse_matrix
from kit.errors import UsageError
from kit.install import environment, envs, lockfile, plan as install, release
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


class EraIndex:
    """An index that is up, has jax 0.6.0, and dates it."""

    def check_reachable(self) -> None:
        pass

    def unknown_release(self, version: str) -> str:
        return ""

    def release_date(self, version: str) -> datetime:
        return datetime(2025, 4, 16, tzinfo=timezone.utc)


def test_extra_packages_get_their_own_environment_and_lock_and_leave_the_release_s_alone(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    matrix = parse_matrix({"kit": {"results_dir": str(tmp_path / "results"), "envs_dir": str(tmp_path / "envs")},
                           "install": {"pythons": ["3.12"], "jaxlib_archive": ""},
                           "release": [{"version": "0.6.0"}], "checks": {"scaling": {}}}, tmp_path / "matrix.toml")
    asked: list[tuple[str, ...]] = []

    def resolve(plan: InstallPlan, python: str, offline: bool = False) -> Resolution:
        asked.append(plan.requirements)
        extra = {"flax": "0.10.6"} if "flax" in plan.requires else {}
        return Resolution(python, ok=True, pins={"jax": "0.6.0", "jaxlib": "0.6.0", **extra})

    monkeypatch.setattr(install, "resolve", resolve)
    monkeypatch.setattr(release, "available_pythons", lambda wanted: list(wanted))
    monkeypatch.setattr(envs, "find_interpreter", lambda version: Path(sys.executable))
    monkeypatch.setattr(environment, "pick_backend", LinkBackend)
    lines: list[str] = []
    plain = environment.prepare(matrix, "0.6.0", "cpu", lines.append, index=EraIndex())  # type: ignore[arg-type]
    with_flax = environment.prepare(matrix, "0.6.0", "cpu", lines.append, index=EraIndex(),  # type: ignore[arg-type]
                                    requires=("flax",))
    assert plain.environment is not None and with_flax.environment is not None
    assert plain.environment.python.parent.parent != with_flax.environment.python.parent.parent
    assert "-with-flax-" in with_flax.environment.python.parent.parent.name
    assert with_flax.environment.pins["flax"] == "0.10.6" and "flax" not in plain.environment.pins
    assert any(line.endswith("; requires: flax 0.10.6") for line in lines)
    assert asked == [("jax[cpu]==0.6.0", "scipy"), ("jax[cpu]==0.6.0", "scipy", "flax")]
    # Each set is locked under its own key: both answer again without uv.
    monkeypatch.setattr(install, "resolve", lambda *a, **k: pytest.fail("uv was asked"))
    again = environment.prepare(matrix, "0.6.0", "cpu", lines.append, requires=("flax",))
    assert again.environment is not None and again.environment.reused and again.plan.requires == ("flax",)
    assert environment.prepare(matrix, "0.6.0", "cpu", lines.append).plan.requires == ()
    assert len(list((tmp_path / "envs" / "locks").iterdir())) == 2
