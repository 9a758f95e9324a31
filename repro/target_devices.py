"""Compile-only devices of a chip this machine does not have, and the HLO its compiler makes.

Runs inside a release's environment with the target's compiler installed
(jax[tpu]'s libtpu, or the CUDA plugin): ``jax.experimental.topologies`` gives
devices that can be compiled for but not run on. A ``Mesh`` over them and
``jit(...).lower(ShapeDtypeStruct(..., sharding=...)).compile()`` is the
target compiler's own work. The target is `kit.targets.Target.to_json()`'s dict:
this half imports nothing of the kit.

Set before jax is imported (`prepare_process`): libtpu outside a TPU VM waits on
a metadata server unless told not to, and two processes loading it at once
need leave to. A GPU target's devices come from its description file
(repro/targets/*.txtpb); the CUDA plugin up to jax 0.6 gives no text for their
compiles, so its HLO is read from XLA's dump folder instead (`dumped_texts`).
"""

from __future__ import annotations

import os
import re
from typing import Any, Dict, List, Mapping, Optional, Tuple

TPU_VARIABLES = {"TPU_SKIP_MDS_QUERY": "1", "ALLOW_MULTIPLE_LIBTPU_LOAD": "1"}

TARGETS_FOLDER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "targets")

# Fields of GpuTargetConfigProto that newer plugins read but jaxlib 0.5.3 and 0.6.0 do not know (their parser
# refuses the whole description over one): tried with them first, then without.
NEWER_GPU_FIELDS = ("thread_dim_limit_x", "thread_dim_limit_y", "thread_dim_limit_z")


def prepare_process(dump_dir: Optional[str] = None) -> None:
    """What a process compiling for a target sets before ``import jax``; ``dump_dir`` for `dumped_texts`."""
    for name, value in TPU_VARIABLES.items():
        os.environ.setdefault(name, value)
    if dump_dir:
        os.environ["XLA_FLAGS"] = with_dump_flags(os.environ.get("XLA_FLAGS", ""), dump_dir)


DUMP_ENV = "KIT_TARGET_DUMP"
"""Set in a process compiling for a GPU target (`prepare_gpu_process`): where XLA dumps, for `after_text`."""


def prepare_gpu_process(dump_dir: str) -> None:
    """What a check compiling for a GPU target sets before ``import jax``, as `repro.target_compile` does: JAX on
    CPU (the CUDA plugin would look for a GPU and cuDNN, and fail), no autotuning (a deviceless compile cannot
    time kernels: jax 0.5 and 0.6 stop at the first matmul), and XLA's dump, read where a compile gives no text.
    Without a CUDA runtime the plugin of jax 0.6.1 to 0.7 refuses to load ("Unable to load CUDA") unless its
    version check is skipped; newer ones skip it themselves when JAX_PLATFORMS leaves CUDA out."""
    os.environ["JAX_PLATFORMS"] = "cpu"
    os.environ["JAX_SKIP_CUDA_CONSTRAINTS_CHECK"] = "1"
    os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") + " --xla_gpu_autotune_level=0").strip()
    prepare_process(dump_dir)
    os.environ[DUMP_ENV] = dump_dir


def after_text(compiled: Any, dump_dir: str) -> str:
    """A compile's optimised HLO: ``as_text()``, else (the CUDA plugin's compile-only compiles up to jax 0.6)
    the last one XLA dumped to ``dump_dir``."""
    try:
        text = compiled.as_text()
    except Exception:
        text = None
    if not text:
        text = dumped_texts(dump_dir)[1]
    if not text:
        raise RuntimeError("the target's compiler gave no HLO text, and XLA dumped none")
    return "\n".join(str(part) for part in text) if isinstance(text, (list, tuple)) else str(text)


def with_dump_flags(flags: str, dump_dir: str) -> str:
    """XLA_FLAGS that also write each compile's HLO text to ``dump_dir`` (XLA reads them once, at import)."""
    return " ".join(part for part in (flags.strip(), f"--xla_dump_to={dump_dir}", "--xla_dump_hlo_as_text") if part)


def compile_only_devices(jax: Any, target: Mapping[str, Any]) -> List[Any]:
    """The target's devices, to compile for and never to run on."""
    from jax.experimental import topologies

    if target["platform"] == "tpu":
        bounds = tuple(int(part) for part in str(target["host_bounds"]).split(","))
        topology = topologies.get_topology_desc(platform="tpu", topology_name=target["topology"],
                                                chip_config_name="default", chips_per_host_bounds=bounds,
                                                num_slices=1)
        return list(topology.devices)
    if target["platform"] == "cuda":
        return _gpu_devices(topologies, str(target["topology"]), description_text(target))
    raise ValueError(f"no compile-only devices for platform {target['platform']!r}")


def description_text(target: Mapping[str, Any]) -> str:
    """The GPU target's description (a GpuTargetConfigProto in text form): carried in the target where the user
    wrote their own (``description_text``), else the kit's own from the folder beside this file."""
    if target.get("description_text"):
        return str(target["description_text"])
    with open(os.path.join(TARGETS_FOLDER, str(target["description"])), encoding="utf-8") as file:
        return file.read()


def _gpu_devices(topologies: Any, topology: str, description: str) -> List[Any]:
    """Compile-only devices of the CUDA plugin: the description as written, else without the newer fields."""
    try:
        return list(topologies.get_topology_desc(platform="cuda", topology=topology,
                                                 target_config=description).devices)
    except Exception as error:
        # The plugin says only "Failed to parse GpuTargetConfigProto" (the field it refused goes to stderr).
        if "GpuTargetConfigProto" not in str(error):
            raise
    older = without_fields(description, NEWER_GPU_FIELDS)
    return list(topologies.get_topology_desc(platform="cuda", topology=topology, target_config=older).devices)


def without_fields(text: str, names: Tuple[str, ...]) -> str:
    """A text-form proto without the scalar fields ``names`` (one ``name: value`` a line, as our files write them)."""
    pattern = re.compile(r"^\s*(" + "|".join(re.escape(name) for name in names) + r")\s*:")
    return "".join(line for line in text.splitlines(keepends=True) if not pattern.match(line))


def before_text(lowered: Any) -> Optional[str]:
    """A lowering's HLO before optimizations (the global shapes), with each op's name where the release gives it;
    None where it gives none."""
    try:  # with each op's name (``lu``), so the reader finds its global batch; older releases lack debug_info
        return str(lowered.as_text(dialect="hlo", debug_info=True))
    except Exception:
        try:
            return str(lowered.compiler_ir("hlo").as_hlo_text())
        except Exception:  # releases differ in what compiler_ir offers; the after text still decides
            return None


def compiled_texts(lowered: Any, compiled: Any,
                   dump_dir: Optional[str] = None) -> Tuple[Optional[str], Optional[str]]:
    """(before optimizations, after optimizations) HLO text of one compile; None where the release gives none.

    ``dump_dir``: where `prepare_process` had XLA dump its texts, read where ``as_text()`` gives none (the CUDA
    plugin's compile-only devices up to jax 0.6).
    """
    before = before_text(lowered)
    try:
        after = compiled.as_text()
    except Exception:
        after = None
    if not after and dump_dir:
        dumped_before, after = dumped_texts(dump_dir)
        before = before or dumped_before
    return before, after or None


# XLA names each dump `module_0001.jit_f.before_optimizations.txt`; the GPU compiler's after text is
# `module_0001.jit_f.sm_8.0_gpu_after_optimizations.txt`, and newer XLA adds `.cl_123...` after the name.
# `after_optimizations-buffer-assignment.txt` and the like are other reports of the same compile.
_DUMP_NAME = re.compile(r"^module_(\d+)\.(.+?)(?:\.cl_\d+)?\.(?:[\w.]*_)?(before|after)_optimizations\.txt$")


def dumped_texts(dump_dir: str, module: str = "") -> Tuple[Optional[str], Optional[str]]:
    """(before, after optimizations) HLO text of the last compile XLA dumped to ``dump_dir``; None where absent.

    For releases whose compile-only compiles give no `as_text()` (the CUDA plugin up to jax 0.6): XLA still
    writes the texts where `prepare_process(dump_dir)` told it to. ``module`` keeps to compiles whose name
    holds it (``jit_loss``), as one process may have compiled others first.
    """
    found = dump_files(os.listdir(dump_dir) if os.path.isdir(dump_dir) else [], module)
    if not found:
        return None, None
    last = found[max(found)]  # module numbers count up through the process: the highest is the last compile
    return _read_in(dump_dir, last.get("before")), _read_in(dump_dir, last.get("after"))


def dump_files(names: List[str], module: str = "") -> Dict[Tuple[int, str], Dict[str, str]]:
    """The dump's file names by (module number, module name), then by "before" / "after"."""
    found: Dict[Tuple[int, str], Dict[str, str]] = {}
    for name in names:
        match = _DUMP_NAME.match(name)
        if match and module in match.group(2):
            found.setdefault((int(match.group(1)), match.group(2)), {})[match.group(3)] = name
    return found


def _read_in(folder: str, name: Optional[str]) -> Optional[str]:
    if name is None:
        return None
    with open(os.path.join(folder, name), encoding="utf-8") as file:
        return file.read()


def device_kind(devices: List[Any]) -> Dict[str, Any]:
    """What the compiler says the devices are (``TPU v5 lite``), for the record."""
    return {"count": len(devices), "kind": getattr(devices[0], "device_kind", "") if devices else ""}
