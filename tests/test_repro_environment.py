"""repro/environment.py: what ran where (versions, devices, host, the variables that change what JAX does).

The kit's use of it (hardware facts, a run's identity) is in test_run_facts.py; here the module's own
readings are checked: which variables count, how nvidia-smi's listing is read, and what is None.
"""

from __future__ import annotations

import os
import sys
import types
from pathlib import Path

import pytest

from repro import environment
from repro.environment import cpu_model, describe_environment, gpu_facts, jax_variables


def _nvidia_smi(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, output: str, code: int = 0) -> None:
    fake = tmp_path / "nvidia-smi"
    fake.write_text(f"#!/bin/sh\ncat <<'END'\n{output}END\nexit {code}\n")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setattr(environment, "_GPU_FACTS", {})


def test_jax_variables_take_every_prefix_and_named_variable_sorted() -> None:
    environ = {"XLA_FLAGS": "--x", "JAX_ENABLE_X64": "1", "CUDA_VISIBLE_DEVICES": "0", "NCCL_DEBUG": "INFO",
               "TF_CPP_MIN_LOG_LEVEL": "0", "HOME": "/root", "PATH": "/bin", "MY_JAX_THING": "no",
               "CUDA_HOME": "/usr/local/cuda"}
    assert list(jax_variables(environ).items()) == [("CUDA_VISIBLE_DEVICES", "0"), ("JAX_ENABLE_X64", "1"),
                                                    ("NCCL_DEBUG", "INFO"), ("TF_CPP_MIN_LOG_LEVEL", "0"),
                                                    ("XLA_FLAGS", "--x")]


def test_jax_variables_match_prefixes_exactly() -> None:
    # "JAX" alone or a lowercase "jax_" is not what JAX reads: a prefix match without the underscore would keep them.
    assert jax_variables({"JAX": "1", "jax_enable_x64": "1", "JAXLIB_X": "1", "XLA": "1"}) == {}


def test_jax_variables_read_the_process_environment_by_default(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("JAX_PLATFORMS", "cpu")
    assert jax_variables()["JAX_PLATFORMS"] == "cpu"


@pytest.mark.skipif(not Path("/proc/cpuinfo").exists(), reason="no /proc/cpuinfo here")
def test_the_cpu_model_is_the_model_name_line() -> None:
    lines = [line for line in Path("/proc/cpuinfo").read_text().splitlines() if line.lower().startswith("model name")]
    expected = lines[0].split(":", 1)[1].strip() if lines else None
    assert cpu_model() == expected or (expected is None and cpu_model())


def test_several_kinds_of_gpu_are_counted_per_kind_and_drivers_listed_once(tmp_path: Path,
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    _nvidia_smi(tmp_path, monkeypatch, "NVIDIA H100, 550.54\nNVIDIA A100, 550.54\nNVIDIA H100, 550.54\n")
    assert gpu_facts() == {"gpu": "1 x NVIDIA A100; 2 x NVIDIA H100", "gpu_driver": "550.54"}


@pytest.mark.parametrize("output, code", [("No devices were found\n", 0), ("", 0),
                                          ("NVIDIA H100, 550.54\n", 9)])
def test_no_usable_listing_is_no_gpu(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, output: str, code: int) -> None:
    # A failed nvidia-smi (code 9: driver not loaded) must not name GPUs it printed before failing.
    _nvidia_smi(tmp_path, monkeypatch, output, code)
    assert gpu_facts() == {"gpu": None, "gpu_driver": None}


def test_no_nvidia_smi_is_no_gpu(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setattr(environment, "_GPU_FACTS", {})
    assert gpu_facts() == {"gpu": None, "gpu_driver": None}


def test_gpu_facts_are_read_once_and_handed_out_as_copies(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _nvidia_smi(tmp_path, monkeypatch, "NVIDIA H100, 550.54\n")
    first = gpu_facts()
    first["gpu"] = "changed by a caller"
    (tmp_path / "nvidia-smi").unlink()  # a second query would find none
    assert gpu_facts() == {"gpu": "1 x NVIDIA H100", "gpu_driver": "550.54"}


def test_a_package_that_fails_to_import_is_absent_not_an_error(monkeypatch: pytest.MonkeyPatch) -> None:
    broken = types.ModuleType("scipy")
    monkeypatch.setitem(sys.modules, "scipy", None)  # import scipy raises ImportError
    assert environment._version_of("scipy") is None
    monkeypatch.setitem(sys.modules, "scipy", broken)  # imports, no __version__
    assert environment._version_of("scipy") is None


def test_describe_environment_reports_jax_and_its_devices(monkeypatch: pytest.MonkeyPatch) -> None:
    device = types.SimpleNamespace(device_kind="cpu")
    jax = types.ModuleType("jax")
    jax.__version__ = "0.6.0"  # type: ignore[attr-defined]
    jax.devices = lambda: [device] * 4  # type: ignore[attr-defined]
    jax.default_backend = lambda: "cpu"  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "jax", jax)
    monkeypatch.setitem(sys.modules, "jaxlib", None)  # no jaxlib: its version is None, not an error
    monkeypatch.setenv("XLA_FLAGS", "--xla_force_host_platform_device_count=4")
    facts = describe_environment()
    assert (facts["jax"], facts["jaxlib"], facts["backend"], facts["device_kind"], facts["device_count"]) == \
        ("0.6.0", None, "cpu", "cpu", 4)
    assert facts["variables"]["XLA_FLAGS"] == "--xla_force_host_platform_device_count=4"
    assert facts["executable"] == sys.executable
    assert "gpu" not in facts  # GPU facts only for a GPU run
    # jax[tpu] sets TPU_LIBRARY_PATH to the environment's own libtpu: no path of this machine goes in a record.
    monkeypatch.setenv("TPU_LIBRARY_PATH", os.path.join(sys.prefix, "lib", "libtpu", "libtpu.so"))
    assert describe_environment()["variables"]["TPU_LIBRARY_PATH"] == "<the environment's own libtpu>"
    monkeypatch.setenv("TPU_LIBRARY_PATH", "/opt/my/libtpu.so")  # the user's own choice is kept as set
    assert describe_environment()["variables"]["TPU_LIBRARY_PATH"] == "/opt/my/libtpu.so"
    # A GPU target's compile dumps to a temp folder of the run (repro.target_devices): said, not its path.
    monkeypatch.setenv("KIT_TARGET_DUMP", "/tmp/kit-target-dump-abc")
    monkeypatch.setenv("XLA_FLAGS", "--xla_gpu_autotune_level=0 --xla_dump_to=/tmp/kit-target-dump-abc")
    assert describe_environment()["variables"]["XLA_FLAGS"] == \
        "--xla_gpu_autotune_level=0 --xla_dump_to=<the run's scratch dump>"


def test_describe_environment_without_jax_says_none(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "jax", None)
    facts = describe_environment()
    assert (facts["jax"], facts["backend"], facts["device_count"]) == (None, None, None)
