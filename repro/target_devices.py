"""Compile-only devices of a chip this machine does not have, and the HLO its compiler makes.

Runs inside a release's environment with the target's compiler installed
(jax[tpu]'s libtpu, or the CUDA plugin): ``jax.experimental.topologies`` gives
devices that can be compiled for but not run on. A ``Mesh`` over them and
``jit(...).lower(ShapeDtypeStruct(..., sharding=...)).compile()`` is the
target compiler's own work. The target is `kit.targets.Target.to_json()`'s dict:
this half imports nothing of the kit.

Set before jax is imported (`prepare_process`): libtpu outside a TPU VM waits on
a metadata server unless told not to, and two processes loading it at once
need leave to.
"""

from __future__ import annotations

import os
from typing import Any, Dict, List, Mapping, Optional, Tuple

TPU_VARIABLES = {"TPU_SKIP_MDS_QUERY": "1", "ALLOW_MULTIPLE_LIBTPU_LOAD": "1"}


def prepare_process() -> None:
    """What a process compiling for a target sets before ``import jax``."""
    for name, value in TPU_VARIABLES.items():
        os.environ.setdefault(name, value)


def compile_only_devices(jax: Any, target: Mapping[str, Any]) -> List[Any]:
    """The target's devices, to compile for and never to run on."""
    from jax.experimental import topologies

    if target["platform"] == "tpu":
        bounds = tuple(int(part) for part in str(target["host_bounds"]).split(","))
        topology = topologies.get_topology_desc(platform="tpu", topology_name=target["topology"],
                                                chip_config_name="default", chips_per_host_bounds=bounds,
                                                num_slices=1)
        return list(topology.devices)
    raise ValueError(f"no compile-only devices for platform {target['platform']!r}")


def compiled_texts(lowered: Any, compiled: Any) -> Tuple[Optional[str], Optional[str]]:
    """(before optimizations, after optimizations) HLO text of one compile; None where the release gives none."""
    before: Optional[str] = None
    try:  # with each op's name (``lu``), so the reader finds its global batch; older releases lack debug_info
        before = lowered.as_text(dialect="hlo", debug_info=True)
    except Exception:
        try:
            before = lowered.compiler_ir("hlo").as_hlo_text()
        except Exception:  # releases differ in what compiler_ir offers; the after text still decides
            before = None
    try:
        after = compiled.as_text()
    except Exception:
        after = None
    return before, after or None


def device_kind(devices: List[Any]) -> Dict[str, Any]:
    """What the compiler says the devices are (``TPU v5 lite``), for the record."""
    return {"count": len(devices), "kind": getattr(devices[0], "device_kind", "") if devices else ""}
