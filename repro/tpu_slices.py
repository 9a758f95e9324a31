"""The TPU slices the kit compiles for without having them: one table, and how a slice and its verdicts are said.

Standard library only: the kit reads it too (kit/targets.py parses ``--target tpu:v5e:2x2`` from it), and the
scaling repro on a real single TPU chip picks its chip kind's slice from it (repro/scaling_target.py).
"""

from __future__ import annotations

from typing import Any, Dict, Optional, Tuple

# Named TPU slices: chip, topology as libtpu names it, chips per host, and the devices JAX shows for it (read off
# libtpu 0.0.50.1 on 2026-12-05: a v4 chip shows as two devices).
TPU_SLICES: Dict[str, Tuple[str, str, str, int]] = {
    # name: (chip kind as people say it, topology_name, chips_per_host_bounds, devices)
    "v5e:1x1": ("v5e", "v5e:1x1", "1,1,1", 1),
    "v5e:2x2": ("v5e", "v5e:2x2", "2,2,1", 4),
    "v5e:2x4": ("v5e", "v5e:2x4", "2,2,1", 8),
    "v6e:2x2": ("v6e", "v6e:2x2", "2,2,1", 4),
    "v6e:2x4": ("v6e", "v6e:2x4", "2,2,1", 8),
    "v5p:2x2x1": ("v5p", "v5p:2x2x1", "2,2,1", 4),
    "v4:2x2x1": ("v4", "v4:2x2x1", "2,2,1", 8),
}

# A single chip's ``device_kind`` as JAX reports it → the slice of 4 chips of that kind (a v4 chip shows two
# devices, so its 2x2x1 has 8). "TPU v5 lite" is a v5e, "TPU v5" (or "TPU v5p") a v5p.
SLICE_OF_KIND: Dict[str, str] = {
    "TPU v5 lite": "v5e:2x2", "TPU v5e": "v5e:2x2",
    "TPU v6 lite": "v6e:2x2", "TPU v6e": "v6e:2x2",
    "TPU v4": "v4:2x2x1",
    "TPU v5": "v5p:2x2x1", "TPU v5p": "v5p:2x2x1",
}


def tpu_title(chip: str, topology: str, devices: int) -> str:
    """``TPU v5e 2x2 (4 devices)``: how a slice is named in every verdict and report."""
    return f"TPU {chip} {topology.split(':', 1)[-1]} ({devices} devices)"


def compiled_not_run(title: str) -> str:
    """``compiled for TPU v5e 2x2 (4 devices), not run``: what every verdict for a target says."""
    return f"compiled for {title}, not run"


def slice_json(name: str) -> Optional[Dict[str, Any]]:
    """The slice ``name`` (``v5e:2x2``) as the target's JSON the repro reads (`kit.targets.Target.to_json`'s
    fields); None for a name the table does not have."""
    if name not in TPU_SLICES:
        return None
    chip, topology, bounds, devices = TPU_SLICES[name]
    return {"name": f"tpu:{name}", "platform": "tpu", "chip": chip, "devices": devices, "topology": topology,
            "host_bounds": bounds, "description": "", "title": tpu_title(chip, topology, devices)}
