"""repro.target_devices: a GPU target's description file and the HLO texts XLA dumps, without JAX.

The compile itself is the integration test's (test_target_devices_integration.py); here the plugin is a
stand-in ``jax.experimental.topologies`` that refuses descriptions the way jaxlib 0.5.3 does, and the dump
folders hold the file names real releases wrote (0.5.3 and 0.6.0's CUDA plugin, 0.12's CPU compiler).
"""

from __future__ import annotations

import sys
import types
from pathlib import Path
from typing import Any

import pytest

from kit.targets import _GPUS, parse_target
from repro import target_devices
from repro.target_devices import (NEWER_GPU_FIELDS, compile_only_devices, compiled_texts, description_text,
                                  dump_files, dumped_texts, prepare_process, with_dump_flags, without_fields)

TARGETS = Path(target_devices.__file__).resolve().parent / "targets"  # a GPU target's description files


class OldPlugin:
    """`jax.experimental.topologies` of jaxlib 0.5.3: any field it does not know fails the whole description."""

    def __init__(self) -> None:
        self.configs: list[str] = []

    def get_topology_desc(self, platform: str, topology: str, target_config: str) -> Any:
        self.configs.append(target_config)
        if any(field in target_config for field in NEWER_GPU_FIELDS):
            raise RuntimeError("FAILED_PRECONDITION: Failed to parse GpuTargetConfigProto from the "
                               "'target_config' parameter.")
        count = int(topology.split("x")[1])
        return types.SimpleNamespace(devices=[f"{platform}:{i}" for i in range(count)])


def with_plugin(monkeypatch: pytest.MonkeyPatch, plugin: Any) -> None:
    jax = types.ModuleType("jax")
    experimental = types.ModuleType("jax.experimental")
    experimental.topologies = plugin  # type: ignore[attr-defined]
    jax.experimental = experimental  # type: ignore[attr-defined]
    for name, module in (("jax", jax), ("jax.experimental", experimental), ("jax.experimental.topologies", plugin)):
        monkeypatch.setitem(sys.modules, name, module)


@pytest.mark.parametrize("chip", sorted(_GPUS))
def test_every_named_gpu_has_its_description_beside_the_compile_script(chip: str) -> None:
    target = parse_target(f"gpu:{chip}:4")
    text = description_text(target.to_json())
    assert text == (TARGETS / target.description).read_text(encoding="utf-8")  # beside repro/target_compile.py
    assert 'platform_name: "CUDA"' in text and "core_count:" in text and "cuda_compute_capability" in text


def test_an_old_plugin_gets_the_description_without_the_fields_it_does_not_know(
        monkeypatch: pytest.MonkeyPatch) -> None:
    plugin = OldPlugin()
    with_plugin(monkeypatch, plugin)
    devices = compile_only_devices(None, parse_target("gpu:a100:4").to_json())
    assert devices == ["cuda:0", "cuda:1", "cuda:2", "cuda:3"]
    first, second = plugin.configs  # tried as written, then once without
    assert "thread_dim_limit_x" in first and "thread_dim_limit_x" not in second
    assert "core_count: 108" in second


def test_a_plugin_error_other_than_parsing_is_not_retried(monkeypatch: pytest.MonkeyPatch) -> None:
    class Broken(OldPlugin):
        def get_topology_desc(self, platform: str, topology: str, target_config: str) -> Any:
            self.configs.append(target_config)
            raise RuntimeError("UNIMPLEMENTED: no cuda plugin")

    plugin = Broken()
    with_plugin(monkeypatch, plugin)
    with pytest.raises(RuntimeError, match="UNIMPLEMENTED"):
        compile_only_devices(None, parse_target("gpu:h100:8").to_json())
    assert len(plugin.configs) == 1


def test_without_fields_drops_only_the_named_scalar_lines() -> None:
    text = "a {\n  thread_dim_limit_x: 1024\n  core_count: 108\n  thread_dim_limit_xy: 2\n}\nname: \"x\"\n"
    kept = "a {\n  core_count: 108\n  thread_dim_limit_xy: 2\n}\nname: \"x\"\n"
    assert without_fields(text, ("thread_dim_limit_x",)) == kept


def test_dump_flags_keep_the_callers_flags_and_are_set_before_jax(monkeypatch: pytest.MonkeyPatch) -> None:
    assert with_dump_flags(" --xla_foo=1 ", "/d") == "--xla_foo=1 --xla_dump_to=/d --xla_dump_hlo_as_text"
    assert with_dump_flags("", "/d") == "--xla_dump_to=/d --xla_dump_hlo_as_text"
    for name in ("XLA_FLAGS", *target_devices.TPU_VARIABLES):  # put back as they were after the test
        monkeypatch.delenv(name, raising=False)
    prepare_process()
    assert "XLA_FLAGS" not in target_devices.os.environ
    prepare_process("/tmp/dump")
    assert target_devices.os.environ["XLA_FLAGS"] == "--xla_dump_to=/tmp/dump --xla_dump_hlo_as_text"


# As jax 0.5.3's CUDA plugin dumped two compiles (a loss, then its grad), reports of each beside the texts.
CUDA_0_5_3 = [f"module_{n}.jit_loss.{report}" for n in ("0001", "0012") for report in (
    "before_optimizations.txt", "sm_8.0_gpu_after_optimizations.txt", "ptx", "config.pbtxt",
    "sm_8.0_gpu_after_optimizations-buffer-assignment.txt", "sm_8.0_gpu_after_optimizations-memory-usage-report.txt")]
# As a newer XLA names them: the compile's fingerprint after the module name.
NEWER = ["module_0000.jit_loss_det.cl_1004524046.after_optimizations.txt",
         "module_0000.jit_loss_det.cl_1004524046.before_optimizations.txt",
         "module_0000.jit_loss_det.cl_1004524046.after_optimizations_after_buffer_assignment.txt",
         "module_0000.jit_loss_det.cl_1004524046.after_optimizations-buffer-assignment.txt"]


def test_dump_files_finds_the_two_texts_of_each_compile_and_no_other_report() -> None:
    found = dump_files(CUDA_0_5_3)
    assert found == {(n, "jit_loss"): {"before": f"module_{n:04d}.jit_loss.before_optimizations.txt",
                                       "after": f"module_{n:04d}.jit_loss.sm_8.0_gpu_after_optimizations.txt"}
                     for n in (1, 12)}
    assert dump_files(NEWER) == {(0, "jit_loss_det"): {"before": NEWER[1], "after": NEWER[0]}}
    assert dump_files(CUDA_0_5_3 + NEWER, module="loss_det") == dump_files(NEWER)


def write_dump(folder: Path, names: list[str]) -> None:
    for name in names:
        (folder / name).write_text(f"text of {name}", encoding="utf-8")


def test_dumped_texts_are_the_last_compile_s(tmp_path: Path) -> None:
    write_dump(tmp_path, CUDA_0_5_3)
    before, after = dumped_texts(str(tmp_path))
    assert before == "text of module_0012.jit_loss.before_optimizations.txt"
    assert after == "text of module_0012.jit_loss.sm_8.0_gpu_after_optimizations.txt"


def test_dumped_texts_of_an_empty_or_missing_folder_are_none(tmp_path: Path) -> None:
    assert dumped_texts(str(tmp_path)) == (None, None)
    assert dumped_texts(str(tmp_path / "never-made")) == (None, None)
    write_dump(tmp_path, ["module_0001.jit_f.before_optimizations.txt"])  # a compile that failed half-way
    assert dumped_texts(str(tmp_path)) == ("text of module_0001.jit_f.before_optimizations.txt", None)


class NoText:
    """A compile-only GPU compile up to jax 0.6: ``as_text()`` is None, ``compiler_ir`` has no "hlo"."""

    def as_text(self) -> None:
        return None

    def compiler_ir(self, dialect: str) -> Any:
        raise NotImplementedError(dialect)


def test_compiled_texts_falls_back_to_the_dump_only_where_the_compile_gives_none(tmp_path: Path) -> None:
    write_dump(tmp_path, NEWER)
    assert compiled_texts(NoText(), NoText()) == (None, None)
    before, after = compiled_texts(NoText(), NoText(), dump_dir=str(tmp_path))
    assert (before, after) == (f"text of {NEWER[1]}", f"text of {NEWER[0]}")
    given = types.SimpleNamespace(as_text=lambda: "HloModule given")
    assert compiled_texts(NoText(), given, dump_dir=str(tmp_path)) == (None, "HloModule given")


def test_a_gpu_targets_compile_without_text_is_read_from_xlas_dump(tmp_path: Path, monkeypatch) -> None:
    """The CUDA plugin's compile-only compiles up to jax 0.6 give no as_text(): the scaling check reads the
    last module XLA dumped (`repro.compat.compiled_hlo_text` asks `after_text` where the dump is set), as
    explain's compile does; with neither, it says so rather than read "None"."""
    for name in ("XLA_FLAGS", "JAX_PLATFORMS", "JAX_SKIP_CUDA_CONSTRAINTS_CHECK", target_devices.DUMP_ENV,
                 *target_devices.TPU_VARIABLES):
        monkeypatch.setenv(name, "")  # restored after the test, whatever prepare_gpu_process sets
    target_devices.prepare_gpu_process(str(tmp_path))
    environ = target_devices.os.environ
    assert (environ["JAX_PLATFORMS"], environ[target_devices.DUMP_ENV]) == ("cpu", str(tmp_path))
    assert environ["JAX_SKIP_CUDA_CONSTRAINTS_CHECK"] == "1"  # jax 0.6.2: "Unable to load CUDA" without it
    assert "--xla_gpu_autotune_level=0" in environ["XLA_FLAGS"] and f"--xla_dump_to={tmp_path}" in environ["XLA_FLAGS"]
    silent = types.SimpleNamespace(as_text=lambda: None)
    with pytest.raises(RuntimeError, match="gave no HLO text, and XLA dumped none"):
        target_devices.after_text(silent, str(tmp_path))
    (tmp_path / "module_0001.jit_f.sm_8.0_gpu_after_optimizations.txt").write_text("HloModule old\n")
    (tmp_path / "module_0002.jit_f.sm_8.0_gpu_after_optimizations.txt").write_text("HloModule last\n")
    assert target_devices.after_text(silent, str(tmp_path)) == "HloModule last\n"
    assert target_devices.after_text(types.SimpleNamespace(as_text=lambda: "HloModule own"), str(tmp_path)) == \
        "HloModule own"
