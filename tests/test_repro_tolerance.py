"""Planted faults for repro.tolerance: numpy stands in for JAX, float32 LAPACK for the kernel.

No jax here: the comparison must be checkable without the thing it judges.
"""

from __future__ import annotations

from typing import Dict, Optional

import numpy as np
import pytest
import scipy.linalg

from repro import tolerance
from repro.tolerance import AFFECTED, INCONCLUSIVE, UNAFFECTED

N = 20


def _condition_1(matrices: np.ndarray) -> np.ndarray:
    a = matrices.astype(np.float64)
    inverse = np.linalg.inv(a)
    return np.abs(a).sum(axis=-2).max(axis=-1) * np.abs(inverse).sum(axis=-2).max(axis=-1)


def _honest_batch(batch: int, seed: int = 0, dtype: type = np.float32) -> Dict[str, np.ndarray]:
    """Gaussian matrices, their working-precision slogdet/det and float64 references."""
    rng = np.random.default_rng(seed)
    matrices = rng.standard_normal((batch, N, N)).astype(dtype)
    # LAPACK in `dtype` on the transposes: an honest kernel (same determinant) whose
    # rounding differs from the reference's even in float64, where numpy's slogdet of
    # the same matrices would be the reference itself, bit for bit.
    transposed = np.swapaxes(matrices, -1, -2)
    sign, logabsdet = np.linalg.slogdet(transposed)
    det = np.linalg.det(transposed)
    ref_sign, ref_logabsdet = np.linalg.slogdet(matrices.astype(np.float64))
    return {
        "matrices": matrices,
        "sign": sign,
        "logabsdet": logabsdet,
        "det": det,
        "ref_sign": ref_sign,
        "ref_logabsdet": ref_logabsdet,
        "cond": _condition_1(matrices),
    }


def _compare(data: Dict[str, np.ndarray], dtype: type = np.float32, det: Optional[np.ndarray] = None):
    return tolerance.compare(
        np.arange(len(data["sign"])),
        data["sign"],
        data["logabsdet"],
        data["ref_sign"],
        data["ref_logabsdet"],
        data["cond"],
        n=N,
        dtype=dtype,
        det=data["det"] if det is None else det,
    )


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_honest_slogdet_passes(dtype: type) -> None:
    data = _honest_batch(3000, seed=1, dtype=dtype)
    result = _compare(data, dtype)
    assert result.bad_count == 0
    assert result.first_bad_index is None
    assert result.checked_count == 3000
    assert result.nan_count == 0
    assert result.inf_count == 0
    # Honest float32 LU is accurate to roughly eps·κ: the figure is real, not zero.
    assert result.max_rel_error is not None
    assert 0 < result.max_rel_error < 0.05


@pytest.mark.parametrize("k", [0, 37, 1999])
def test_corruption_from_index_k_is_found_at_k(k: int) -> None:
    # The GPU bug returned other matrices' values past the boundary: plant that,
    # as a wrapped pointer reading matrices 500 entries back.
    data = _honest_batch(2000, seed=2)
    for key in ("sign", "logabsdet", "det"):
        corrupted = data[key].copy()
        corrupted[k:] = np.roll(data[key], 500)[k:]
        data[key] = corrupted
    result = _compare(data)
    assert result.first_bad_index == k
    assert result.first_bad_byte_offset == k * N * N * 4
    assert result.last_good_before_first_bad == (k - 1 if k else None)
    # Nearly every corrupted entry is caught; only near-singular ones can hide.
    corrupted_count = 2000 - k
    assert result.bad_count >= 0.95 * corrupted_count
    assert result.bad_count <= corrupted_count
    assert result.bad_fraction == pytest.approx(result.bad_count / 2000)


def test_byte_offset_uses_itemsize_of_float64() -> None:
    data = _honest_batch(100, seed=3, dtype=np.float64)
    data["logabsdet"] = data["logabsdet"].copy()
    data["logabsdet"][41:] += 0.5
    result = _compare(data, np.float64)
    assert result.first_bad_index == 41
    assert result.first_bad_byte_offset == 41 * N * N * 8


def _graded(condition: float, seed: int) -> np.ndarray:
    """Q₁·diag(1 … 1/condition)·Q₂: κ₂ = condition by construction."""
    rng = np.random.default_rng(seed)
    q1, _ = np.linalg.qr(rng.standard_normal((N, N)))
    q2, _ = np.linalg.qr(rng.standard_normal((N, N)))
    return q1 @ np.diag(np.logspace(0, -np.log10(condition), N)) @ q2


def test_ill_conditioned_honest_error_is_not_flagged() -> None:
    # A backward-stable float32 kernel returns the exact det of A + ΔA with
    # ‖ΔA‖ ~ eps‖A‖. Plant the worst such ΔA (along the smallest singular
    # pair): one float32 ulp of backward error moves log|det| by ≈ eps·κ₂.
    matrix = _graded(3e4, seed=4)
    u, singular_values, vt = np.linalg.svd(matrix)
    eps32 = float(np.finfo(np.float32).eps)
    honest = matrix + eps32 * singular_values[0] * np.outer(u[:, -1], vt[-1])
    sign, logabsdet = np.linalg.slogdet(honest[None])
    ref_sign, ref_logabsdet = np.linalg.slogdet(matrix[None])
    honest_error = abs(float(logabsdet[0] - ref_logabsdet[0]))
    # The honest value really is off by more than a fixed 1e-3 would allow...
    assert honest_error > 1e-3
    cond = _condition_1(matrix[None])
    result = tolerance.compare([0], sign, logabsdet, ref_sign, ref_logabsdet, cond, n=N, dtype=np.float32)
    # ...and the κ-aware bound accepts it, while still deciding its sign.
    assert result.bad_count == 0
    assert result.undetermined_count == 0


def test_well_conditioned_small_error_is_flagged() -> None:
    # An orthogonal matrix (κ₁ ≈ n): log|det| off by 1e-2 cannot be rounding in float32.
    q, _ = np.linalg.qr(np.random.default_rng(5).standard_normal((N, N)))
    matrix = q[None]
    ref_sign, ref_logabsdet = np.linalg.slogdet(matrix)
    cond = _condition_1(matrix)
    assert cond[0] < 100
    result = tolerance.compare(
        [0], ref_sign, ref_logabsdet + 1e-2, ref_sign, ref_logabsdet, cond, n=N, dtype=np.float32
    )
    assert result.bad_count == 1
    # The same error on the graded matrix above is within its bound: κ decides.
    graded = _graded(3e4, seed=4)[None]
    ref_sign, ref_logabsdet = np.linalg.slogdet(graded)
    result = tolerance.compare(
        [0], ref_sign, ref_logabsdet + 1e-2, ref_sign, ref_logabsdet, _condition_1(graded), n=N, dtype=np.float32
    )
    assert result.bad_count == 0


def test_sign_flip_counts_only_where_sign_is_determined() -> None:
    data = _honest_batch(2, seed=6)
    data["sign"] = -data["sign"]
    near_singular = np.array([1.0, 1e9])  # κβ ≥ 1 for the second in float32
    result = tolerance.compare(
        [0, 1], data["sign"], data["logabsdet"], data["ref_sign"], data["ref_logabsdet"],
        near_singular, n=N, dtype=np.float32,
    )
    assert result.bad_indices == [0]
    assert result.sign_mismatch_count == 1
    assert result.undetermined_count == 1


def test_nan_and_inf_are_counted_and_flagged() -> None:
    data = _honest_batch(50, seed=7)
    data["logabsdet"] = data["logabsdet"].copy()
    data["logabsdet"][[3, 9]] = np.nan
    data["logabsdet"][20] = -np.inf  # a zero determinant for a nonsingular matrix
    det = data["det"].copy()
    det[30] = np.inf
    result = _compare(data, det=det)
    assert result.nan_count == 2
    assert result.inf_count == 2
    assert result.bad_indices == [3, 9, 20, 30]
    assert result.first_bad_index == 3


def test_wrong_det_with_right_slogdet_is_flagged() -> None:
    data = _honest_batch(20, seed=8)
    det = data["det"].copy()
    det[12] *= 1.1
    assert tolerance.logabsdet_tolerance(data["cond"][12:13], data["ref_logabsdet"][12:13], N, np.float32)[0] < 0.05
    result = _compare(data, det=det)
    assert result.bad_indices == [12]


def test_det_overflow_in_float32_is_honest() -> None:
    # Scaled by 1e3, a 20×20 determinant is ~1e69: inf in float32 is right.
    data = _honest_batch(5, seed=9)
    data["logabsdet"] = data["logabsdet"] + N * np.log(1e3)
    data["ref_logabsdet"] = data["ref_logabsdet"] + N * np.log(1e3)
    det = np.where(data["sign"] > 0, np.inf, -np.inf).astype(np.float32)
    result = _compare(data, det=det)
    assert result.bad_count == 0
    assert result.inf_count == 5


def test_needs_condition_is_exact() -> None:
    # κ = 1 for the entries it screens out must give the same judgement as the true κ.
    data = _honest_batch(400, seed=10)
    data["logabsdet"] = data["logabsdet"].copy()
    data["logabsdet"][200:] = np.roll(data["logabsdet"], 7)[200:]
    screened = tolerance.needs_condition(
        data["sign"], data["logabsdet"], data["ref_sign"], data["ref_logabsdet"], N, np.float32, data["det"]
    )
    assert screened[200:].sum() >= 190
    assert screened[:200].sum() < 20
    partial_cond = np.where(screened, data["cond"], 1.0)
    full = _compare(data)
    lazy = _compare({**data, "cond": partial_cond})
    assert lazy == full


def test_scipy_lu_reference_agrees_with_numpy_within_tolerance() -> None:
    # The reference path is numpy's batched slogdet; scipy's LU must agree with it.
    data = _honest_batch(50, seed=11, dtype=np.float64)
    for i in range(50):
        lu, pivots = scipy.linalg.lu_factor(data["matrices"][i])
        logabsdet = float(np.log(np.abs(np.diag(lu))).sum())
        bound = tolerance.logabsdet_tolerance(data["cond"][i : i + 1], data["ref_logabsdet"][i : i + 1], N, np.float64)
        assert abs(logabsdet - data["ref_logabsdet"][i]) <= bound[0]


def test_tolerance_grows_with_condition_and_is_infinite_when_undetermined() -> None:
    cond = np.array([1.0, 1e2, 1e4, 1e9])
    bound = tolerance.logabsdet_tolerance(cond, np.zeros(4), N, np.float32)
    assert np.all(np.diff(bound[:3]) > 0)
    assert np.isinf(bound[3])
    assert list(tolerance.sign_determined(cond, N, np.float32)) == [True, True, True, False]


def _verdict(**overrides: object):
    arguments: Dict[str, object] = dict(
        backend="gpu",
        bad_count=0,
        checked_count=4000,
        checked_past_boundary=129,
        crossed_boundary=True,
        completed=True,
        largest_bytes=2_400_000_000,
        max_rel_error=2.5e-5,
        first_bad_index=None,
        first_bad_byte_offset=None,
    )
    arguments.update(overrides)
    return tolerance.correctness_verdict(**arguments)  # type: ignore[arg-type]


def test_verdict_affected_names_the_first_bad_index_and_offset() -> None:
    verdict, reason = _verdict(bad_count=12, first_bad_index=1342178, first_bad_byte_offset=1342178 * 1600)
    assert verdict == AFFECTED
    assert "1342178" in reason
    assert "2,147,484,800" in reason
    assert "GPU" in reason


def test_verdict_unaffected_needs_a_crossing_and_enough_checks() -> None:
    verdict, reason = _verdict()
    assert verdict == UNAFFECTED
    assert "2.5e-05" in reason
    assert "129" in reason


def test_verdict_inconclusive_when_nothing_crossed() -> None:
    verdict, reason = _verdict(crossed_boundary=False, largest_bytes=1_000_000_000)
    assert verdict == INCONCLUSIVE
    assert "2**31" in reason


def test_verdict_inconclusive_when_cut_short_or_too_few() -> None:
    assert _verdict(completed=False)[0] == INCONCLUSIVE
    assert _verdict(checked_past_boundary=3)[0] == INCONCLUSIVE


def test_verdict_on_cpu_says_so_and_points_at_gpu() -> None:
    verdict, reason = _verdict(backend="cpu")
    assert verdict == UNAFFECTED
    assert "CPU" in reason
    assert "GPU" in reason


def test_complex64_is_judged_by_its_complex_log_det_and_a_turned_phase_is_caught() -> None:
    # complex64, the TPU's other LU type: the sign lies on the unit circle, so "same sign" is a phase within the
    # bound, and the bound of step 2 holds for log|det| + i·arg det together.
    rng = np.random.default_rng(3)
    matrices = (rng.standard_normal((300, N, N)) + 1j * rng.standard_normal((300, N, N))).astype(np.complex64)
    sign, logabsdet = np.linalg.slogdet(matrices)  # complex64 LAPACK stands in for the kernel
    ref_sign, ref_logabsdet = np.linalg.slogdet(matrices.astype(np.complex128))
    cond = np.asarray(np.linalg.cond(matrices.astype(np.complex128), 1))
    det = np.linalg.det(matrices)
    honest = tolerance.compare(np.arange(300), sign, logabsdet, ref_sign, ref_logabsdet, cond, n=N,
                               dtype="complex64", det=det)
    assert honest.bad_count == 0 and honest.max_rel_error is not None and honest.max_rel_error < 1e-4
    turned = sign.copy()
    turned[7] *= np.exp(0.3j)  # a turn of the phase, far beyond rounding (log|det| untouched)
    planted = tolerance.compare(np.arange(300), turned, logabsdet, ref_sign, ref_logabsdet, cond, n=N,
                                dtype="complex64", det=det)
    assert (planted.bad_count, planted.first_bad_index, planted.sign_mismatch_count) == (1, 7, 1)
