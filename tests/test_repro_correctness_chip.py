"""repro.correctness_chip: the chip's figures for the sizing, each feature-detected (a stand-in jax; no TPU here).

The stand-in compiles as XLA on a v5e did: a plan whose temporaries pass the chip's HBM is refused at compile
time with RESOURCE_EXHAUSTED (20×20 past 2**31 bytes), others compile and report their memory, or (an older
release) report none.
"""

from __future__ import annotations

import types
from typing import Any

import numpy as np
import pytest

from repro import correctness_chip
from repro.correctness_plan import boundary_indices

GiB = 2**30
HBM = 16_909_336_064  # a v5e's bytes_limit


class _Compiled:
    def __init__(self, need: int, analysed: bool) -> None:
        self.need, self.analysed = need, analysed


def _jax(analysed: bool = True) -> Any:
    """``jax.jit(f).lower(shape).compile()`` and ``jax.ShapeDtypeStruct`` as a v5e answered them."""
    def compile_for(shape: Any) -> _Compiled:
        batch, n, _ = shape.shape
        input_bytes = batch * n * n * np.dtype(shape.dtype).itemsize
        temporaries = int(2.0 * input_bytes * 128 / min(n, 128))  # the minor dimension padded to 128 lanes
        if temporaries > HBM:
            raise RuntimeError(f"RESOURCE_EXHAUSTED: Ran out of memory on HBM, the total memory required for HLO "
                               f"temporaries ({temporaries / 1e9:.2f}G) exceeds available HBM (15.75G).\nmore")
        return _Compiled(input_bytes + temporaries, analysed)

    lowered = types.SimpleNamespace
    jit = lambda function: lowered(lower=lambda shape: lowered(compile=lambda: compile_for(shape)))  # noqa: E731
    linalg = types.SimpleNamespace(slogdet=object(), det=object())
    return types.SimpleNamespace(jit=jit, numpy=types.SimpleNamespace(linalg=linalg),
                                 ShapeDtypeStruct=lambda shape, dtype: types.SimpleNamespace(shape=shape, dtype=dtype))


class _Compat:
    @staticmethod
    def memory_analysis_bytes(compiled: _Compiled) -> int | None:
        return compiled.need if compiled.analysed else None


class _Chip:
    device_kind = "TPU v5 lite"

    def __init__(self, stats: Any) -> None:
        self.stats = stats

    def memory_stats(self) -> Any:
        return self.stats


PARAMETERS = {"matrix_size": 20, "dtypes": ["float32", "float64"], "batches": "auto", "window": 64,
              "max_memory_gb": None}


def test_on_a_v5e_the_cases_move_to_128_and_float64_gives_way_to_complex64() -> None:
    plans, chip = correctness_chip.plan_chip_cases(_jax(), _Compat(), dict(PARAMETERS),
                                                   _Chip({"bytes_limit": HBM, "bytes_in_use": 26624}))
    at = boundary_indices(128, 8)
    assert {(plan["dtype"], plan["batch"], plan["n"]) for plan in plans} >= {
        ("float32", boundary_indices(128, 4)["2**31 bytes"] + 65, 128), ("complex64", at["2**29 elements"] + 65, 128)}
    assert chip["dtypes"] == ["float32", "complex64"] and chip["not_crossed"] == []
    refused = [peak for peak in chip["peaks"] if peak["n"] == 20]
    assert refused and refused[0]["bytes"] is None
    assert "HLO temporaries (" in refused[0]["source"] and "more" not in refused[0]["source"]
    sentence = correctness_chip.chip_sentence(chip)
    assert sentence.startswith("On one TPU v5 lite chip (15.75 GiB free), batches sized to it at 128×128 "
                               "(float32, complex64): crossed 2**31 bytes and 2**29 elements; matrix size 128×128")
    assert "float64 was not run" in sentence


def test_without_memory_stats_or_analysis_the_compiler_and_the_estimate_decide() -> None:
    plans, chip = correctness_chip.plan_chip_cases(_jax(analysed=False), _Compat(), dict(PARAMETERS), _Chip(None))
    assert chip["free_bytes"] is None and chip["matrix_size"] == 128
    assert all(plan["device_peak_source"].startswith("estimated") for plan in plans)
    assert "unknown memory" in correctness_chip.chip_sentence(chip)


def test_a_compile_error_other_than_memory_is_the_repro_s_own_and_is_raised() -> None:
    broken = _jax()
    broken.jit = lambda function: types.SimpleNamespace(lower=lambda shape: (_ for _ in ()).throw(TypeError("bug")))
    with pytest.raises(TypeError):
        correctness_chip.plan_chip_cases(broken, _Compat(), dict(PARAMETERS), _Chip(None))
