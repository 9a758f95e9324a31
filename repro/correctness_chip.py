"""The correctness repro on a TPU: its cases sized to the chip by what the compiler says each needs.

Runs inside the JAX environment (`repro.correctness` calls it when
``jax.default_backend()`` is tpu). The sizing decisions themselves are pure
(`repro.correctness_plan.size_to_chip`, tested without JAX); this module
gives them the chip's figures: its free memory from ``memory_stats()`` and,
for each candidate batch, the compiled slogdet's and det's needs from
``memory_analysis()``, both feature-detected.
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Tuple

import numpy as np

from repro.correctness_plan import (
    device_free_bytes,
    gb,
    memory_plan,
    size_to_chip,
    tpu_dtypes,
    tpu_estimate_bytes,
)


def plan_chip_cases(jax: Any, compat: Any, parameters: Dict[str, Any], device: Any) -> Tuple[List[Dict[str, Any]],
                                                                                          Dict[str, Any]]:
    """A TPU's cases, sized to the chip's free memory by what the compiler says each needs; and what was
    decided, in sentences (a boundary not crossed, and why; float64 not run, and why) for the result."""
    dtypes, notes = tpu_dtypes(list(parameters["dtypes"]))
    free = device_free_bytes(device)
    cap = None if parameters["max_memory_gb"] is None else int(parameters["max_memory_gb"] * 2**30)
    limit = min((value for value in (free, cap) if value is not None), default=None)
    peak = _chip_peak(jax, compat)
    n = parameters["matrix_size"]
    if parameters["batches"] == "auto":
        sized = size_to_chip(n, dtypes, parameters["window"], limit, peak)
        n, cases, not_crossed, peaks = sized["n"], sized["cases"], sized["not_crossed"], sized["peaks"]
        notes = sized["notes"] + notes
    else:  # as asked; check_fits refuses what the compiler says does not fit
        cases = [(dtype, batch) for dtype in dtypes for batch in parameters["batches"]]
        not_crossed, peaks = [], []
    plans = []
    for dtype, batch in cases:
        memory = memory_plan(n, dtype, batch)
        needed, source = peak(n, dtype, batch)
        memory["device_peak_bytes"] = needed if needed is not None else tpu_estimate_bytes(
            n, np.dtype(dtype).itemsize, batch)
        plans.append({"dtype": dtype, "batch": batch, "n": n, "backend": "tpu", "memory": memory,
                      "device_peak_source": source})
    chip = {"device_kind": getattr(device, "device_kind", None), "free_bytes": free, "limit_bytes": limit,
            "matrix_size": n, "matrix_size_asked": parameters["matrix_size"], "dtypes": dtypes,
            "not_crossed": not_crossed, "notes": notes, "peaks": peaks}
    return plans, chip


def _chip_peak(jax: Any, compat: Any) -> Any:
    """`repro.correctness_plan.Peak` on this chip: the larger of slogdet's and det's compiled needs, compiled
    for the shape without an array (so nothing is allocated); None where the compiler refuses it as too big."""
    known: Dict[Tuple[int, str, int], Tuple[Optional[int], str]] = {}

    def peak(n: int, dtype: str, batch: int) -> Tuple[Optional[int], str]:
        if (n, dtype, batch) not in known:
            known[(n, dtype, batch)] = _compiled_need(jax, compat, n, dtype, batch)
        return known[(n, dtype, batch)]
    return peak


def _compiled_need(jax: Any, compat: Any, n: int, dtype: str, batch: int) -> Tuple[Optional[int], str]:
    shape = jax.ShapeDtypeStruct((batch, n, n), np.dtype(dtype))
    needs = []
    for function in (jax.numpy.linalg.slogdet, jax.numpy.linalg.det):
        try:
            compiled = jax.jit(function).lower(shape).compile()
        except Exception as error:  # XLA checks the chip's memory as it compiles: RESOURCE_EXHAUSTED
            said = str(error)
            if "RESOURCE_EXHAUSTED" not in said:
                raise
            line = next((text for text in said.splitlines() if "RESOURCE_EXHAUSTED" in text), said)
            return None, "the compiler refused it: " + line.replace("RESOURCE_EXHAUSTED: ", "").strip()[:200]
        needs.append(compat.memory_analysis_bytes(compiled))
    if None in needs:
        return tpu_estimate_bytes(n, np.dtype(dtype).itemsize, batch), "estimated: the compiler gave no memory figures"
    return max(need for need in needs if need is not None), "the compiled plan's memory analysis"


def chip_sentence(chip: Dict[str, Any]) -> str:
    """What the chip's sizing decided, for the result's reason: the boundaries not crossed and why, float64."""
    free = "unknown memory" if chip["limit_bytes"] is None else f"{gb(chip['limit_bytes'])} free"
    said = chip["not_crossed"] + chip["notes"]
    crossed = "" if chip["not_crossed"] else "crossed 2**31 bytes and 2**29 elements; "
    return (f"On one {chip['device_kind'] or 'TPU'} chip ({free}), batches sized to it at "
            f"{chip['matrix_size']}×{chip['matrix_size']} ({', '.join(chip['dtypes'])}): {crossed}"
            + ("; ".join(said) if said else "nothing left out") + ".")
