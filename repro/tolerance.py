"""Which of JAX's det/slogdet values are wrong, judged against float64 references.

Pure numpy on purpose (no jax import): the comparison must be testable with
planted faults on any machine, and must not share code paths with the thing
it judges.

The tolerance comes from the backward-error analysis of LU with partial
pivoting, not from a magic number:

1. LU with partial pivoting is backward stable: the computed factors are the
   exact factors of A + ΔA with ‖ΔA‖ ≤ β‖A‖.  Wilkinson's bound has
   β ≈ γ_n·ρ ≈ n·eps·ρ (ρ the growth factor, O(1)–O(n^½) for matrices that are
   not built to defeat pivoting).  We take β = c·eps with c = n, i.e. γ_n with
   ρ = 1.  Measured on 200,000 Gaussian 20×20 matrices (float32 and float64,
   jax 0.4.35 CPU vs numpy float64) the worst error was 0.03 of n·eps·κ₁, so
   c = n leaves a ~600× margin for honest rounding, while anything that is
   not the determinant of *this* matrix (another matrix's, zero, garbage)
   misses by O(1) in log|det| and is still caught whenever κ ≲ 1/(n²·eps).
2. log|det(A+ΔA)| − log|det A| = log|det(I+E)|, E = A⁻¹ΔA, ‖E‖ ≤ κ(A)·β.
   Every eigenvalue λ of E has |λ| ≤ ‖E‖, and |log|1+λ|| ≤ −log(1−|λ|), so
       |Δ log|det|| ≤ −n·log(1 − κ·β)       (≈ n·c·eps·κ when κβ ≪ 1),
   valid in any induced norm; we use the 1-norm, κ₁ = ‖A‖₁‖A⁻¹‖₁, which the
   caller computes exactly in float64.
3. When κ·β ≥ 1, A+ΔA may be singular: neither the sign nor the magnitude is
   determined by the working precision, so such an entry is never flagged.
   Where κ·β < 1 the determinant cannot cross zero, so a sign mismatch is a
   real error.
4. log|det| is then summed from n logs of pivots: at most (n+1)·eps·Σ|log|u_ii||
   more.  |u_ii| ≥ 1/‖U⁻¹‖ ≥ 1/(n‖A⁻¹‖) (|l_ij| ≤ 1) and |u_ii| ≤ ρ‖A‖ with
   ρ ≤ n (the same premise as step 1), so log|u_ii| = log‖A‖ + r_i with
   |r_i| ≤ log(nκ); with Σ log|u_ii| = log|det| that gives
   Σ|log|u_ii|| ≤ |log|det|| + 2n·log(nκ).
5. The float64 reference has the same kind of error with float64 eps, so the
   allowance is the sum of both sides' bounds.

Every bound grows with κ, so using κ = 1 for an entry gives a *smaller*
tolerance: an entry within tolerance at κ = 1 is within it at its true κ.
`needs_condition` uses that to compute κ only where the answer depends on it.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

import numpy as np

# The byte offset past which jax#24843 returned wrong values on GPU.
BOUNDARY_BYTES = 2**31
# Some releases could also overflow an element count; for float32 both coincide.
BOUNDARY_ELEMENTS = 2**29

AFFECTED = "affected"
UNAFFECTED = "unaffected"
INCONCLUSIVE = "inconclusive"

# Fewer checked entries past the boundary than this and "all good" means little:
# the bug corrupted every entry past the boundary, so a window this wide
# cannot miss it, while a handful could be a lucky draw of representable values.
MIN_CHECKED_PAST_BOUNDARY = 32
# How many bad indices to keep verbatim in the evidence.
BAD_INDEX_SAMPLE = 20


def _real(cond: Any) -> np.ndarray:
    """Condition numbers as float64: numpy 1.x gives a complex matrix's as complex (its imaginary part is 0)."""
    return np.asarray(np.real(cond), dtype=np.float64)


def _eps(dtype: Any) -> float:
    return float(np.finfo(np.dtype(dtype)).eps)


def backward_error(n: int, dtype: Any) -> float:
    """β: the normwise backward error allowed for LU of an n×n matrix in `dtype`."""
    return n * _eps(dtype)  # c = n, see the module docstring (step 1)


def _one_side(cond: np.ndarray, ref_logabsdet: np.ndarray, n: int, dtype: Any) -> np.ndarray:
    beta = backward_error(n, dtype)
    kb = _real(cond) * beta
    with np.errstate(divide="ignore", invalid="ignore"):
        perturbation = np.where(kb < 1.0, -n * np.log1p(-kb), np.inf)
        log_pivots = np.log(n * _real(cond))
    pivot_logs = np.abs(ref_logabsdet) + 2.0 * n * log_pivots
    summation = (n + 1) * _eps(dtype) * pivot_logs
    return perturbation + summation


def logabsdet_tolerance(
    cond: np.ndarray, ref_logabsdet: np.ndarray, n: int, dtype: Any
) -> np.ndarray:
    """Per-entry bound on |logabsdet_jax − logabsdet_ref|; inf where undetermined."""
    ref = np.asarray(ref_logabsdet, dtype=np.float64)
    ref = np.where(np.isfinite(ref), ref, 0.0)
    return _one_side(cond, ref, n, dtype) + _one_side(cond, ref, n, np.float64)


def sign_determined(cond: np.ndarray, n: int, dtype: Any) -> np.ndarray:
    """True where κβ < 1 in both precisions, i.e. the sign cannot be a rounding artefact."""
    cond = _real(cond)
    return (cond * backward_error(n, dtype) < 1.0) & (cond * backward_error(n, np.float64) < 1.0)


def relative_errors(
    sign: np.ndarray, logabsdet: np.ndarray, ref_sign: np.ndarray, ref_logabsdet: np.ndarray
) -> np.ndarray:
    """|det − det_ref| / |det_ref| from the slogdet pairs, without overflow.

    Same sign: |expm1(Δ)|; opposite signs: 1 + exp(Δ) (the values lie on both
    sides of zero); a zero determinant from JAX: exactly 1.
    """
    if np.iscomplexobj(sign) or np.iscomplexobj(ref_sign):
        return _complex_relative_errors(sign, logabsdet, ref_sign, ref_logabsdet)
    with np.errstate(over="ignore", invalid="ignore"):
        delta = np.asarray(logabsdet, dtype=np.float64) - np.asarray(ref_logabsdet, dtype=np.float64)
        same = np.asarray(sign) == np.asarray(ref_sign)
        rel = np.where(same, np.abs(np.expm1(delta)), 1.0 + np.exp(delta))
        rel = np.where(np.asarray(sign) == 0, 1.0, rel)
    return rel


def _complex_relative_errors(sign: np.ndarray, logabsdet: np.ndarray, ref_sign: np.ndarray,
                             ref_logabsdet: np.ndarray) -> np.ndarray:
    """|det − det_ref| / |det_ref| for complex determinants: |(sign / ref_sign)·exp(Δ) − 1| (signs on the unit
    circle); for real signs this is the same |expm1(Δ)| or 1 + exp(Δ) as above."""
    with np.errstate(over="ignore", invalid="ignore"):
        delta = np.asarray(logabsdet, dtype=np.float64) - np.asarray(ref_logabsdet, dtype=np.float64)
        turn = np.asarray(sign, dtype=np.complex128) * np.conj(np.asarray(ref_sign, dtype=np.complex128))
        rel = np.abs(turn * np.exp(delta) - 1.0)
        return np.where(np.asarray(sign) == 0, 1.0, rel)


def _det_relative_errors(det: np.ndarray, ref_sign: np.ndarray, ref_logabsdet: np.ndarray) -> np.ndarray:
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        kind = np.complex128 if np.iscomplexobj(det) or np.iscomplexobj(ref_sign) else np.float64
        det64 = np.asarray(det, dtype=kind)
        ref_det = np.asarray(ref_sign, dtype=kind) * np.exp(np.asarray(ref_logabsdet, dtype=np.float64))
        return np.abs(det64 - ref_det) / np.abs(ref_det)


@dataclass(frozen=True)
class Comparison:
    """What the comparison found among the checked entries of one batch."""

    n: int
    dtype: str
    checked_count: int
    bad_count: int
    bad_fraction: float
    first_bad_index: Optional[int]
    first_bad_byte_offset: Optional[int]
    max_rel_error: Optional[float]  # over entries whose tolerance is finite
    max_logabs_error: Optional[float]
    nan_count: int
    inf_count: int
    sign_mismatch_count: int
    undetermined_count: int  # κβ ≥ 1: precision cannot decide, never flagged
    # With sampled checks the errors start somewhere after this index (None:
    # no good entry was checked before the first bad one).
    last_good_before_first_bad: Optional[int] = None
    bad_indices: List[int] = field(default_factory=list)

    def to_dict(self) -> Dict[str, Any]:
        return asdict(self)


def byte_offset(index: int, n: int, dtype: Any) -> int:
    """Where matrix `index` starts in a C-contiguous (batch, n, n) array."""
    return int(index) * n * n * np.dtype(dtype).itemsize


def _finite_max(values: np.ndarray) -> Optional[float]:
    finite = values[np.isfinite(values)]
    return float(finite.max()) if finite.size else None


def needs_condition(
    sign: np.ndarray,
    logabsdet: np.ndarray,
    ref_sign: np.ndarray,
    ref_logabsdet: np.ndarray,
    n: int,
    dtype: Any,
    det: Optional[np.ndarray] = None,
) -> np.ndarray:
    """Entries whose verdict could depend on κ; every other entry is good at any κ ≥ 1.

    The caller computes κ (an inverse per matrix, the dearest step) only here
    and passes κ = 1 elsewhere, which `compare` then judges exactly as it
    would with the true κ, because every bound grows with κ.
    """
    ones = np.ones(np.shape(ref_logabsdet))
    comparison_at_one = _judge(sign, logabsdet, ref_sign, ref_logabsdet, ones, n, dtype, det)
    return comparison_at_one["bad"] | comparison_at_one["nonfinite"]


def _judge(
    sign: np.ndarray,
    logabsdet: np.ndarray,
    ref_sign: np.ndarray,
    ref_logabsdet: np.ndarray,
    cond: np.ndarray,
    n: int,
    dtype: Any,
    det: Optional[np.ndarray],
) -> Dict[str, np.ndarray]:
    complex_ = np.iscomplexobj(sign) or np.iscomplexobj(ref_sign)
    kind = np.complex128 if complex_ else np.float64
    sign = np.asarray(sign, dtype=kind)
    logabsdet = np.asarray(logabsdet, dtype=np.float64)
    ref_sign = np.asarray(ref_sign, dtype=kind)
    ref_logabsdet = np.asarray(ref_logabsdet, dtype=np.float64)

    tol = logabsdet_tolerance(cond, ref_logabsdet, n, dtype)
    if complex_:  # the phase: n+1 roundings of unit factors more, each side
        tol = tol + (n + 1) * (_eps(dtype) + _eps(np.float64))
    # The reference must itself be a finite, nonzero determinant to judge against.
    judgeable = sign_determined(cond, n, dtype) & (ref_sign != 0) & np.isfinite(ref_logabsdet)

    nan = np.isnan(sign) | np.isnan(logabsdet)
    inf = np.isinf(logabsdet)
    with np.errstate(invalid="ignore"):
        log_error = np.abs(logabsdet - ref_logabsdet)
        if complex_:
            # The error of the complex log det, log|det| + i·arg det: step 2's bound holds for complex E as it is.
            phase = np.abs(np.angle(sign * np.conj(ref_sign)))
            log_error = np.hypot(log_error, phase)
    sign_mismatch = judgeable & ~nan & ((phase > tol) if complex_ else (sign != ref_sign))
    bad = judgeable & (nan | sign_mismatch | ~(log_error <= tol))

    rel = relative_errors(sign, logabsdet, ref_sign, ref_logabsdet)
    if det is not None:
        det = np.asarray(det, dtype=kind)
        nan |= np.isnan(det)
        inf |= np.isinf(det)
        info = np.finfo(np.dtype(dtype))
        # Only where the true det is representable in `dtype` with room for the
        # tolerance can JAX's det be held to it; outside, overflow is honest.
        representable = (ref_logabsdet + tol < math.log(float(info.max))) & (
            ref_logabsdet - tol > math.log(float(info.tiny))
        )
        det_rel = _det_relative_errors(det, ref_sign, ref_logabsdet)
        # exp of the log bound, plus n roundings in the product of the pivots.
        det_tol = np.expm1(tol + (n + 1) * _eps(dtype))
        det_bad = judgeable & representable & (np.isnan(det) | ~(det_rel <= det_tol))
        bad |= det_bad
        rel = np.where(representable & ~np.isnan(det_rel), np.fmax(rel, det_rel), rel)
    return {
        "bad": bad,
        "nan": nan,
        "inf": inf,
        "nonfinite": nan | inf,
        "sign_mismatch": sign_mismatch,
        "judgeable": judgeable,
        "rel": rel,
        "log_error": log_error,
    }


def compare(
    indices: Union[Sequence[int], np.ndarray],
    sign: np.ndarray,
    logabsdet: np.ndarray,
    ref_sign: np.ndarray,
    ref_logabsdet: np.ndarray,
    cond: np.ndarray,
    *,
    n: int,
    dtype: Any,
    det: Optional[np.ndarray] = None,
) -> Comparison:
    """Judge JAX's slogdet (and det) at `indices` against float64 references.

    All arrays are aligned with `indices` (the batch positions of the entries);
    `cond` is κ₁ of each matrix (1 where `needs_condition` said it is moot).
    """
    index_array = np.asarray(indices, dtype=np.int64)
    judged = _judge(sign, logabsdet, ref_sign, ref_logabsdet, cond, n, dtype, det)
    bad = judged["bad"]
    judgeable = judged["judgeable"]
    bad_positions = index_array[bad]
    first_bad = int(bad_positions.min()) if bad_positions.size else None
    checked = int(index_array.size)
    good_before = index_array[judgeable & ~bad & (index_array < first_bad)] if first_bad is not None else index_array[:0]
    with np.errstate(invalid="ignore"):
        return Comparison(
            n=n,
            dtype=np.dtype(dtype).name,
            checked_count=checked,
            bad_count=int(bad.sum()),
            bad_fraction=float(bad.sum()) / checked if checked else 0.0,
            first_bad_index=first_bad,
            first_bad_byte_offset=None if first_bad is None else byte_offset(first_bad, n, dtype),
            max_rel_error=_finite_max(judged["rel"][judgeable]),
            max_logabs_error=_finite_max(judged["log_error"][judgeable]),
            nan_count=int(judged["nan"].sum()),
            inf_count=int(judged["inf"].sum()),
            sign_mismatch_count=int(judged["sign_mismatch"].sum()),
            undetermined_count=int((~judgeable).sum()),
            last_good_before_first_bad=int(np.max(good_before)) if good_before.size else None,
            bad_indices=[int(i) for i in np.sort(bad_positions)[:BAD_INDEX_SAMPLE]],
        )


def _nothing_checked(first_failure: Optional[str], where: str) -> str:
    """Not "all 0 checked values are within tolerance": nothing was compared (every case failed, under
    ``ulimit -v`` say), so nothing is known about the release."""
    failed = f"; the first failed with {first_failure}" if first_failure else ""
    memory = (" (this machine's memory ran out: a limit such as ulimit -v, or too little free)"
              if first_failure and ("MemoryError" in first_failure or "RESOURCE_EXHAUSTED" in first_failure) else "")
    return (f"No det/slogdet value was checked: every case failed before its values were compared{failed}{memory}, "
            f"so this says nothing about the release; ran {where}.")


def correctness_verdict(
    *,
    backend: str,
    bad_count: int,
    checked_count: int,
    checked_past_boundary: int,
    crossed_boundary: bool,
    completed: bool,
    largest_bytes: int,
    max_rel_error: Optional[float],
    first_bad_index: Optional[int],
    first_bad_byte_offset: Optional[int],
    min_checked_past_boundary: int = MIN_CHECKED_PAST_BOUNDARY,
    first_failure: Optional[str] = None,
) -> Tuple[str, str]:
    """affected / unaffected / inconclusive, and why, in words with figures.

    ``first_failure``: the first case that failed (``MemoryError: ...``), said when no value was checked at all.
    """
    if backend == "cpu":
        where = "on CPU; jax#24843 was reported on GPU (cuSOLVER LU), so this says nothing about GPUs"
    elif backend in ("gpu", "cuda", "rocm"):
        where = f"on {backend.upper()}, where jax#24843 was reported"
    else:
        where = f"on {backend}; jax#24843 was reported on GPU"
    error_text = "n/a" if max_rel_error is None else f"{max_rel_error:.3g}"
    largest = f"{largest_bytes:,} bytes ({largest_bytes / BOUNDARY_BYTES:.2f}× 2**31)"

    if bad_count > 0:
        offset = (
            ""
            if first_bad_byte_offset is None
            else f" (byte offset {first_bad_byte_offset:,}, {first_bad_byte_offset / BOUNDARY_BYTES:.3f}× 2**31)"
        )
        return AFFECTED, (
            f"{bad_count} of {checked_count} checked det/slogdet values are outside the LU error bound, "
            f"the first at batch index {first_bad_index}{offset}; ran {where}."
        )
    if checked_count == 0:
        return INCONCLUSIVE, _nothing_checked(first_failure, where)
    if not crossed_boundary:
        return INCONCLUSIVE, (
            f"All {checked_count} checked values are within tolerance (max relative error {error_text}), "
            f"but no batch passed 2**31 bytes (largest {largest}), where the bug starts; ran {where}."
        )
    if not completed:
        return INCONCLUSIVE, (
            f"The run was cut short; the {checked_count} values checked so far are within tolerance "
            f"(max relative error {error_text}); ran {where}."
        )
    if checked_past_boundary < min_checked_past_boundary:
        return INCONCLUSIVE, (
            f"Only {checked_past_boundary} checked values lie past 2**31 bytes "
            f"(at least {min_checked_past_boundary} needed); ran {where}."
        )
    return UNAFFECTED, (
        f"All {checked_count} checked values ({checked_past_boundary} past 2**31 bytes, largest batch {largest}) "
        f"are within the LU error bound, max relative error {error_text}; ran {where}."
    )
