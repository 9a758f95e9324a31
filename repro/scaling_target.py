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

from repro.tpu_slices import SLICE_OF_KIND, compiled_not_run as _compiled_not_run, slice_json
from repro.verdicts import INCONCLUSIVE


def single_chip_slice(backend: Optional[str], device_kind: Optional[str], device_count: Optional[int]
                      ) -> Optional[Dict[str, Any]]:
    """The slice to compile for where this machine has TPU devices but fewer than 2 (a single chip); else None.

    A kind the table does not know gives None: the run goes on as it would
    (and says it measured one device) rather than guess a topology.
    """
    if backend != "tpu" or device_count is None or device_count >= 2:
        return None
    name = SLICE_OF_KIND.get((device_kind or "").strip())
    return slice_json(name) if name is not None else None


def compiled_not_run(target: Dict[str, Any]) -> str:
    """``compiled for TPU v5e 2x2 (4 devices), not run``: what every verdict for a target says."""
    return _compiled_not_run(target["title"])


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
