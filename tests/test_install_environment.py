"""kit.install.environment: the one answer to "how does this run get its Python"."""

from __future__ import annotations

import sys
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest

from kit.config import Matrix, parse_matrix
from kit.errors import UsageError
from kit.install import environment, envs, lockfile, plan as install, release
from kit.install.plan import InstallPlan, Resolution
from kit.records import packages_fingerprint
from kit.install.key import InstallKey
from kit.log_events import Kind, kind_of
from tests.fake_index import refused_url
from tests.fake_interpreter import RELEASE, fake_interpreter
from tests.fake_repro import write_installed
from tests.metadata_index import TableIndex


class LinkBackend:
    """An 'environment' whose python is this interpreter."""

    name = "link"

    def create(self, path: Path, interpreter: Path) -> None:
        envs.env_python(path).parent.mkdir(parents=True)
        envs.env_python(path).symlink_to(sys.executable)

    def install(self, path: Path, plan: InstallPlan, resolution: Resolution) -> None:
        write_installed(path, resolution.versions)


def test_a_built_release_goes_straight_to_its_environment_with_the_index_down(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    matrix = parse_matrix({"kit": {"results_dir": str(tmp_path / "results"), "envs_dir": str(tmp_path / "envs")},
                           "install": {"index_url": refused_url()},
                           "release": [{"version": "0.6.0"}], "checks": {"scaling": {}}}, tmp_path / "matrix.toml")
    plan = InstallPlan(jax="0.6.0", backend="cpu", requirements=("jax[cpu]==0.6.0", "scipy"),
                       exclude_newer="2025-04-30T00:00:00Z", index_url=matrix.install.index_url, pythons=("3.11",))
    resolution = Resolution("3.11", ok=True, versions={"jax": "0.6.0", "jaxlib": "0.6.0"})
    monkeypatch.setattr(envs, "find_interpreter", lambda version: Path(sys.executable))
    built = envs.ensure_env(matrix.envs_dir, plan, resolution, LinkBackend(), lambda m: None)
    lockfile.write_lock(matrix.envs_dir, lockfile.install_settings(matrix, matrix.release("0.6.0"), InstallKey("cpu")),
                        plan, resolution)
    monkeypatch.setattr(install, "resolve", lambda *a, **k: pytest.fail("uv was asked"))
    lines: list[str] = []
    prepared = environment.prepare(matrix, "0.6.0", InstallKey("cpu"), lines.append)
    assert prepared.environment is not None
    assert prepared.environment.reused
    assert prepared.environment.python == built.python
    assert prepared.environment.pythonpath == ()
    assert prepared.resolution == resolution
    assert prepared.plan == plan
    assert "as locked in" in lines[0]


def test_a_release_s_built_environment_is_the_value_the_runner_consumes(tmp_path: Path) -> None:
    (tmp_path / "bin").mkdir()
    (tmp_path / "pyvenv.cfg").write_text("home = /usr/bin\nversion_info = 3.12.4\n")
    built = envs.Env(tmp_path, tmp_path / "bin" / "python", reused=False, versions={"jax": "0.6.0"})
    made = environment.release_environment(built)
    assert (made.python, dict(made.versions), made.obtained, made.pythonpath, made.python_version) == (
        tmp_path / "bin" / "python", {"jax": "0.6.0"}, environment.BUILT, (), "3.12.4")
    assert not made.reused


def test_cuda_without_a_gpu_stops_before_anything_is_resolved(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    matrix = parse_matrix({"kit": {"envs_dir": str(tmp_path / "envs")}, "release": [{"version": "0.6.0"}],
                           "checks": {"scaling": {}}}, tmp_path / "matrix.toml")
    monkeypatch.setattr(environment.shutil, "which", lambda name: None)
    monkeypatch.delenv("KIT_ALLOW_NO_GPU", raising=False)
    monkeypatch.setattr(environment, "resolve_release", lambda *a, **k: pytest.fail("resolved"))
    with pytest.raises(UsageError, match="no NVIDIA GPU is visible here"):
        environment.prepare(matrix, "0.6.0", InstallKey("cuda"), lambda m: None)


def test_extra_packages_get_their_own_environment_and_lock_and_leave_the_release_s_alone(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    matrix = parse_matrix({"kit": {"results_dir": str(tmp_path / "results"), "envs_dir": str(tmp_path / "envs")},
                           "install": {"pythons": ["3.12"], "jaxlib_archive": ""},
                           "release": [{"version": "0.6.0"}], "checks": {"scaling": {}}}, tmp_path / "matrix.toml")
    asked: list[tuple[str, ...]] = []

    def resolve(plan: InstallPlan, python: str, offline: bool = False, store: object = None) -> Resolution:
        asked.append(plan.requirements)
        extra = {"flax": "0.10.6"} if "flax" in plan.requires else {}
        return Resolution(python, ok=True, versions={"jax": "0.6.0", "jaxlib": "0.6.0", **extra})

    monkeypatch.setattr(install, "resolve", resolve)
    monkeypatch.setattr(release, "available_pythons", lambda wanted: list(wanted))
    monkeypatch.setattr(envs, "find_interpreter", lambda version: Path(sys.executable))
    monkeypatch.setattr(environment, "pick_backend", LinkBackend)
    lines: list[str] = []
    era: Any = TableIndex(dates={"0.6.0": datetime(2025, 4, 16, tzinfo=timezone.utc)})  # up, has jax 0.6.0, dates it
    plain = environment.prepare(matrix, "0.6.0", InstallKey("cpu"), lines.append, index=era)
    with_flax = environment.prepare(matrix, "0.6.0", InstallKey("cpu", requires=("flax",)), lines.append, index=era)
    assert plain.environment is not None
    assert with_flax.environment is not None
    assert plain.environment.python.parent.parent != with_flax.environment.python.parent.parent
    assert "-with-flax-" in with_flax.environment.python.parent.parent.name
    assert with_flax.environment.versions["flax"] == "0.10.6"
    assert "flax" not in plain.environment.versions
    assert any(line.endswith("; requires: flax 0.10.6") for line in lines)
    assert asked == [("jax[cpu]==0.6.0", "scipy"), ("jax[cpu]==0.6.0", "scipy", "flax")]
    # Each set is locked under its own key: both answer again without uv.
    monkeypatch.setattr(install, "resolve", lambda *a, **k: pytest.fail("uv was asked"))
    again = environment.prepare(matrix, "0.6.0", InstallKey("cpu", requires=("flax",)), lines.append)
    assert again.environment is not None
    assert again.environment.reused
    assert again.plan.requires == ("flax",)
    assert environment.prepare(matrix, "0.6.0", InstallKey("cpu"), lines.append).plan.requires == ()
    assert len(list((tmp_path / "envs" / "locks").iterdir())) == 2


def test_a_fresh_resolution_warns_of_the_callers_uv_settings_it_left_out_and_a_locked_one_does_not(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    matrix = parse_matrix({"kit": {"results_dir": str(tmp_path / "results"), "envs_dir": str(tmp_path / "envs")},
                           "install": {"pythons": ["3.12"], "jaxlib_archive": ""},
                           "release": [{"version": "0.6.0"}], "checks": {"scaling": {}}}, tmp_path / "matrix.toml")
    monkeypatch.setattr(install, "resolve", lambda plan, python, **k: Resolution(python, ok=True, versions={
        "jax": "0.6.0", "jaxlib": "0.6.0"}))
    monkeypatch.setattr(release, "available_pythons", lambda wanted: list(wanted))
    monkeypatch.setattr(envs, "find_interpreter", lambda version: Path(sys.executable))
    monkeypatch.setattr(environment, "pick_backend", LinkBackend)
    monkeypatch.setenv("UV_CONSTRAINT", str(tmp_path / "constraints.txt"))
    era: Any = TableIndex(dates={"0.6.0": datetime(2025, 4, 16, tzinfo=timezone.utc)})
    fresh: list[str] = []
    environment.prepare(matrix, "0.6.0", InstallKey("cpu"), fresh.append, index=era)
    warned = [line for line in fresh if kind_of(line) is Kind.WARNING]
    assert [line.split(":")[0] for line in warned] == ["UV_CONSTRAINT is set here"]
    locked: list[str] = []  # uv resolves nothing now: nothing to say
    environment.prepare(matrix, "0.6.0", InstallKey("cpu"), locked.append, index=era)
    assert [line for line in locked if kind_of(line) is Kind.WARNING] == []


# --------------------------------------------------------------------------
# An existing interpreter: one more way to obtain an Environment, nothing resolved or installed


def _offline_matrix(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Matrix:
    """A matrix whose index refuses connections, where resolving or building anything fails the test."""
    monkeypatch.setattr(environment, "resolve_release", lambda *a, **k: pytest.fail("a release was resolved"))
    monkeypatch.setattr(environment, "ensure_env", lambda *a, **k: pytest.fail("an environment was built"))
    return parse_matrix({"kit": {"envs_dir": str(tmp_path / "envs")}, "install": {"index_url": refused_url()},
                         "release": [{"version": "0.4.35"}], "checks": {"scaling": {}, "correctness": {}}},
                        tmp_path / "matrix.toml")


def test_an_existing_interpreter_is_used_as_it_is_and_says_what_it_found(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    matrix = _offline_matrix(tmp_path, monkeypatch)
    python = fake_interpreter(tmp_path / "venv", RELEASE)
    lines: list[str] = []
    prepared = environment.prepare(matrix, "", InstallKey("cpu"), lines.append, existing=environment.ExistingPython(python), check="scaling")
    made = prepared.environment
    assert made is not None
    assert made.obtained == environment.EXISTING
    assert not made.reused
    assert (made.python, dict(made.versions), made.pythonpath) == (python, RELEASE, ())
    assert (prepared.plan, prepared.resolution, prepared.jax, prepared.backend) == (None, None, "0.4.35", "cpu")
    assert prepared.problem == prepared.cannot_test == ""
    assert lines[0].endswith("used as it is (nothing is resolved or installed, no index is asked)")
    assert lines[1].startswith("found jax 0.4.35, jaxlib 0.4.35, numpy 2.1.3, scipy 1.14.1; JAX reports backend cpu")
    facts = environment.install_facts(prepared)
    assert (facts["environment"], facts["interpreter"], facts["packages"]) == ("existing", str(python), RELEASE)
    assert facts["packages_fingerprint"] == packages_fingerprint(RELEASE)


def test_cuda_asked_of_an_existing_gpu_jax_needs_no_nvidia_smi(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The nvidia-smi guard is there to stop a download of CUDA wheels; here nothing is downloaded, and
    # the backend is what that JAX reports.
    matrix = _offline_matrix(tmp_path, monkeypatch)
    monkeypatch.setattr(environment.shutil, "which", lambda name: None)
    monkeypatch.delenv("KIT_ALLOW_NO_GPU", raising=False)
    python = fake_interpreter(tmp_path / "venv", RELEASE, backend="gpu", kind="NVIDIA H200", count=8)
    for asked in (None, "cuda"):
        prepared = environment.prepare(matrix, "0.4.35", InstallKey("cuda"), lambda m: None, existing=environment.ExistingPython(python, backend=asked), check="correctness")
        assert prepared.environment is not None
        assert prepared.backend == "gpu"


def test_a_backend_other_than_the_one_jax_reports_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    matrix = _offline_matrix(tmp_path, monkeypatch)
    python = fake_interpreter(tmp_path / "venv", RELEASE, backend="cpu")
    with pytest.raises(UsageError, match=f"the JAX in {python} runs on cpu, not cuda: --backend cannot change"):
        environment.prepare(matrix, "", InstallKey("cuda"), lambda m: None, existing=environment.ExistingPython(python, backend="cuda"))


def test_a_release_other_than_the_one_installed_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    matrix = _offline_matrix(tmp_path, monkeypatch)
    python = fake_interpreter(tmp_path / "venv", RELEASE)
    with pytest.raises(UsageError, match=f"{python} has jax 0.4.35, not 0.4.36") as caught:
        environment.prepare(matrix, "0.4.36", InstallKey("cpu"), lambda m: None, existing=environment.ExistingPython(python), check="scaling")
    assert caught.value.tip.endswith(f"python -m kit run scaling --python {python}")


def test_a_missing_scipy_is_one_sentence_and_the_check_cannot_test(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    matrix = _offline_matrix(tmp_path, monkeypatch)
    python = fake_interpreter(tmp_path / "venv", {k: v for k, v in RELEASE.items() if k != "scipy"})
    prepared = environment.prepare(matrix, "", InstallKey("cpu"), lambda m: None, existing=environment.ExistingPython(python), check="correctness")
    assert prepared.environment is not None
    assert prepared.problem == ""
    assert prepared.cannot_test == (
        f"{python} has no scipy installed (jax 0.4.35, jaxlib 0.4.35, numpy 2.1.3 are there), which the correctness "
        "check needs; install it there, or run without --python for the kit's own build of jax 0.4.35")


def test_an_interpreter_without_jaxlib_holds_no_release(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    matrix = _offline_matrix(tmp_path, monkeypatch)
    python = fake_interpreter(tmp_path / "venv", {"jax": "0.4.35", "numpy": "2.1.3"})
    prepared = environment.prepare(matrix, "", InstallKey("cpu"), lambda m: None, existing=environment.ExistingPython(python), check="scaling")
    assert prepared.environment is None
    assert prepared.jax == "0.4.35"
    assert prepared.problem.startswith(f"{python} has no jaxlib installed (jax 0.4.35, numpy 2.1.3 are there), "
                                       "so it holds no JAX release to check")


def test_a_check_needs_the_kit_s_packages_and_its_own_requires(tmp_path: Path) -> None:
    matrix = parse_matrix({"release": [{"version": "0.4.35"}], "checks": {"scaling": {}}}, tmp_path / "matrix.toml")
    assert environment.needed_packages(matrix.check("scaling").requires) == ("jax", "jaxlib", "numpy", "scipy")
    # A check's `requires` are looked for by name in an existing interpreter, never installed there.
    assert environment.needed_packages(("optax>=0.1.7", "Flax", "numpy<2")) == (
        "jax", "jaxlib", "numpy", "scipy", "optax", "flax")
