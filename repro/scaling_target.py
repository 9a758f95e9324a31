"""What the scaling repro compiles for when it cannot see the devices it judges: a target, and how it says so.

Two roads lead here. The kit asks for a target (``--target tpu:v5e:2x2``: the
``target`` parameter, `repro.parameters.target_of`), and the repro compiles for
that chip's compile-only devices on a machine without it. Or the repro runs on a
real TPU with a single chip: one device cannot show replication, so it compiles
for the same chip kind's smallest multi-chip slice instead (`single_chip_slice`).
Either way nothing runs on those devices and nothing is timed: the verdict
comes from the target compiler's HLO, and every reason says so
(`compiled_not_run`).

Pure: no jax import, so the mapping and the words are tested anywhere.
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional

from repro.verdicts import INCONCLUSIVE


def _tpu(name: str, chip: str, devices: int, title_shape: str) -> Dict[str, Any]:
    """A TPU slice as `kit.targets.Target.to_json` writes it (tests/test_scaling_target.py checks they agree)."""
    return {"name": f"tpu:{name}", "platform": "tpu", "chip": chip, "devices": devices, "topology": name,
            "host_bounds": "2,2,1", "description": "", "title": f"TPU {chip} {title_shape} ({devices} devices)"}


# A single chip's ``device_kind`` as JAX reports it → the slice of 4 chips of that kind (a v4 chip shows two
# devices, so its 2x2x1 has 8). "TPU v5 lite" is a v5e, "TPU v5" (or "TPU v5p") a v5p.
SLICE_OF_KIND: Dict[str, Dict[str, Any]] = {
    "TPU v5 lite": _tpu("v5e:2x2", "v5e", 4, "2x2"),
    "TPU v5e": _tpu("v5e:2x2", "v5e", 4, "2x2"),
    "TPU v6 lite": _tpu("v6e:2x2", "v6e", 4, "2x2"),
    "TPU v6e": _tpu("v6e:2x2", "v6e", 4, "2x2"),
    "TPU v4": _tpu("v4:2x2x1", "v4", 8, "2x2x1"),
    "TPU v5": _tpu("v5p:2x2x1", "v5p", 4, "2x2x1"),
    "TPU v5p": _tpu("v5p:2x2x1", "v5p", 4, "2x2x1"),
}


def single_chip_slice(backend: Optional[str], device_kind: Optional[str], device_count: Optional[int]
                      ) -> Optional[Dict[str, Any]]:
    """The slice to compile for where this machine has TPU devices but fewer than 2 (a single chip); else None.

    A kind the table does not know gives None: the run goes on as it would
    (and says it measured one device) rather than guess a topology.
    """
    if backend != "tpu" or device_count is None or device_count >= 2:
        return None
    found = SLICE_OF_KIND.get((device_kind or "").strip())
    return dict(found) if found is not None else None


def compiled_not_run(target: Dict[str, Any]) -> str:
    """``compiled for TPU v5e 2x2 (4 devices), not run``: what every verdict for a target says."""
    return f"compiled for {target['title']}, not run"


def why_this_target(target: Dict[str, Any], device_kind: Optional[str]) -> str:
    """The note a single chip's run carries: why it judged a slice it does not have."""
    return (f"this machine has one {device_kind} chip, and one device cannot show replication: "
            f"{compiled_not_run(target)} ({target['name']})")


def judged_reason(reason: str, target: Dict[str, Any], single_chip: Optional[str] = None) -> str:
    """A verdict's reason with where it came from: the target compiler's HLO, compiled for ``target``, not run."""
    source = (f"This machine has one {single_chip} chip, so the verdict is from its compiler's HLO"
              if single_chip else "The verdict is from the target compiler's HLO")
    return f"{reason} {source}: {compiled_not_run(target)}."


def cannot_compile_result(target: Dict[str, Any], why: str, environment: Dict[str, Any],
                          parameters: Dict[str, Any], notes: List[str]) -> Dict[str, Any]:
    """The RESULT.json of a run whose release could not give the target's devices (no
    ``jax.experimental.topologies``, no libtpu): inconclusive, since that is no verdict on the behaviour."""
    reason = (f"This release cannot compile for {target['title']} here ({why}), so nothing was compiled or run "
              "for it and the check does not apply.")
    evidence = {"summary": {}, "cannot_compile_for": {"target": target["name"], "error": why}, "notes": notes}
    return {"check": "scaling", "verdict": INCONCLUSIVE, "reason": reason,
            "environment": {**environment, "compiled_for": target["title"], "target": target["name"]},
            "parameters": dict(parameters), "evidence": evidence, "metrics": {}}
