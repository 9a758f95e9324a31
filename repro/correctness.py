"""The correctness repro: are det/slogdet of a large batch right past 2**31 bytes?

    python -m repro.correctness --out RESULT.json [--preset issue-24843] [--matrix-size 20]
        [--dtypes float32,float64] [--batches auto|1500000,...] [--samples 2000]
        [--window 64] [--seed 0] [--max-memory-gb N] [--full-check-max 400000]

jax#24843: on GPU, `jnp.linalg.det`/`slogdet` of a batch whose byte size passes
2**31 returned wrong values for entries past that offset (jax 0.4.35, fixed in
0.4.36). For each dtype and batch size this draws standard normal matrices
(numpy, a chunk of rows at a time, each put in place on the device), runs slogdet and det on
the whole batch, and judges the outputs with `repro.tolerance` against float64 references (numpy's batched LAPACK, with
scipy's LU as a cross-check) at: windows around each boundary index (2**31
bytes, 2**29 elements), the first and last entries, random samples across the
batch, every entry whose output is NaN/Inf, and every entry of batches up to
--full-check-max. Only outputs and the needed input rows leave the device.

Exit 0 when it ran (whatever the verdict), 2 on bad arguments, 3 when the
requested size does not fit the machine's memory.
"""

from __future__ import annotations

import gc
import os
import sys
import time
from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy as np

from repro import parameters as parameters_rules
from repro import tolerance
from repro.correctness_plan import (
    CHUNK_BYTES,
    DoesNotFit,
    auto_batches,
    boundary_indices,
    check_fits,
    gb,
    mem_available_bytes,
    memory_plan,
    merge_ranges,
    ranges_to_check,
)
from repro.correctness_chip import chip_sentence, plan_chip_cases
from repro.correctness_draw import draw
from repro.contract import EXIT_OK, EXIT_REFUSED, EXIT_USAGE
from repro.cli import UsageError, checked_parameters, exit_now, parser, write_result

# Defaults, presets and limits live in repro/parameters.py, shared with the kit.
DEFAULTS: Dict[str, Any] = parameters_rules.DEFAULTS["correctness"]
PRESETS: Dict[str, Dict[str, Any]] = parameters_rules.PRESETS["correctness"]

# Non-finite outputs are all re-checked, up to this many per case.
MAX_NONFINITE_RECHECK = 10_000


def _progress(message: str) -> None:
    print(f"[correctness] {message}", file=sys.stderr, flush=True)


# --------------------------------------------------------------------------
# Command line


def parse_parameters(argv: Sequence[str]) -> Tuple[str, Dict[str, Any]]:
    """The output path and the full parameters: defaults, then preset, then flags."""
    return checked_parameters("correctness", parser("correctness", __doc__.split("\n\n")[0]), argv)


# --------------------------------------------------------------------------
# One case


def _wide(rows: np.ndarray) -> np.ndarray:
    """The rows in double precision: float64, or complex128 for complex64 (the TPU's other LU type)."""
    return rows.astype(np.complex128 if np.iscomplexobj(rows) else np.float64)


def _references(rows: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
    """Double-precision slogdet by numpy's batched LAPACK getrf."""
    return np.linalg.slogdet(_wide(rows))


def _condition_1(rows: np.ndarray) -> np.ndarray:
    """κ₁ = ‖A‖₁‖A⁻¹‖₁ in double precision; inf for a singular matrix."""
    with np.errstate(all="ignore"):
        return np.asarray(np.linalg.cond(_wide(rows), 1), dtype=np.float64)


def _scipy_crosscheck(rows: np.ndarray, ref_logabsdet: np.ndarray) -> Optional[float]:
    """Largest |numpy − scipy LU| in log|det| over these rows: is the reference itself sound?"""
    try:
        import scipy.linalg
    except Exception:
        return None
    worst = 0.0
    for row, expected in zip(_wide(rows), ref_logabsdet):
        lu, _pivots = scipy.linalg.lu_factor(row, check_finite=False)
        with np.errstate(divide="ignore"):
            value = float(np.log(np.abs(np.diagonal(lu))).sum())
        if np.isfinite(value) and np.isfinite(expected):
            worst = max(worst, abs(value - float(expected)))
    return worst


class _Judged:
    """Accumulates per-chunk judgements into one Comparison's worth of arrays."""

    def __init__(self) -> None:
        self.parts: Dict[str, List[np.ndarray]] = {key: [] for key in
                                                   ("index", "sign", "logabsdet", "det", "ref_sign", "ref_logabsdet", "cond")}

    def add(self, indices: np.ndarray, rows: np.ndarray, outputs: Dict[str, np.ndarray], n: int, dtype: str) -> None:
        ref_sign, ref_logabsdet = _references(rows)
        sign, logabsdet, det = (outputs[key][indices] for key in ("sign", "logabsdet", "det"))
        moot = ~tolerance.needs_condition(sign, logabsdet, ref_sign, ref_logabsdet, n, dtype, det)
        cond = np.ones(len(indices))
        if (~moot).any():
            cond[~moot] = _condition_1(rows[~moot])
        for key, value in (("index", indices), ("sign", sign), ("logabsdet", logabsdet), ("det", det),
                           ("ref_sign", ref_sign), ("ref_logabsdet", ref_logabsdet), ("cond", cond)):
            self.parts[key].append(np.asarray(value))

    def compare(self, n: int, dtype: str) -> tolerance.Comparison:
        joined = {key: np.concatenate(values) if values else np.zeros(0) for key, values in self.parts.items()}
        return tolerance.compare(joined["index"].astype(np.int64), joined["sign"], joined["logabsdet"],
                                 joined["ref_sign"], joined["ref_logabsdet"], joined["cond"],
                                 n=n, dtype=dtype, det=joined["det"])

    def indices(self) -> np.ndarray:
        return np.concatenate(self.parts["index"]) if self.parts["index"] else np.zeros(0, dtype=np.int64)

    def profile(self, lo: int, hi: int, boundary: int) -> Dict[str, Any]:
        """Relative error of each checked entry in [lo, hi]: what the report plots."""
        joined = {key: np.concatenate(values) if values else np.zeros(0) for key, values in self.parts.items()}
        keep = (joined["index"] >= lo) & (joined["index"] <= hi)
        order = np.argsort(joined["index"][keep])
        rel = tolerance.relative_errors(joined["sign"][keep], joined["logabsdet"][keep],
                                        joined["ref_sign"][keep], joined["ref_logabsdet"][keep])[order]
        return {"boundary_index": boundary, "index": [int(i) for i in joined["index"][keep][order]],
                "rel_error": [float(e) if np.isfinite(e) else None for e in rel]}


def run_case(jax: Any, compat: Any, plan: Dict[str, Any], parameters: Dict[str, Any]) -> Dict[str, Any]:
    """Draw, factorise and judge one (dtype, batch) case."""
    n, dtype, batch = plan["n"], plan["dtype"], plan["batch"]
    itemsize = np.dtype(dtype).itemsize
    label = f"{dtype} batch {batch}"
    timings: Dict[str, float] = {}
    x, outputs = _draw_and_factorise(jax, compat, plan, parameters["seed"], label, timings)
    whole_batch = {
        "nan_count": int((np.isnan(outputs["sign"]) | np.isnan(outputs["logabsdet"]) | np.isnan(outputs["det"])).sum()),
        "inf_count": int((np.isinf(outputs["logabsdet"]) | np.isinf(outputs["det"])).sum()),
    }

    started = time.perf_counter()
    judged = _Judged()
    ranges, boundaries = ranges_to_check(batch, n, itemsize, parameters["window"])
    full = batch <= parameters["full_check_max"]
    _judge_ranges(x, outputs, [(0, batch)] if full else ranges, judged, n, dtype)
    crosscheck = _crosscheck_boundary(x, boundaries)
    if not full:
        _judge_samples(jax, x, outputs, judged, n, dtype, parameters)
    del x
    gc.collect()

    comparison = judged.compare(n, dtype)
    checked = judged.indices()
    at_bytes = boundary_indices(n, itemsize)["2**31 bytes"]
    window_checked = next((b["checked"] for b in boundaries if b["name"] == "2**31 bytes" and b["checked"]), None)
    profile = judged.profile(window_checked[0], window_checked[1], at_bytes) if window_checked else None
    timings["check_s"] = time.perf_counter() - started
    _progress(f"{label}: checked {comparison.checked_count} entries in {timings['check_s']:.1f} s, "
              f"{comparison.bad_count} bad, max rel error {comparison.max_rel_error}")
    return {
        "dtype": dtype,
        "batch": batch,
        "n": n,
        "bytes": plan["memory"]["input_bytes"],
        "crossed": plan["memory"]["input_bytes"] > tolerance.BOUNDARY_BYTES,
        "full_check": full,
        "checked_count": comparison.checked_count,
        "checked_past_boundary": int((checked >= at_bytes).sum()),
        "boundaries": boundaries,
        "boundary_profile": profile,
        "comparison": comparison.to_dict(),
        "whole_batch": whole_batch,
        "reference_crosscheck_max_abs_diff": crosscheck,
        "memory": plan["memory"],
        "timings_s": {key: round(value, 3) for key, value in timings.items()},
        "error": None,
    }


def _draw_and_factorise(jax: Any, compat: Any, plan: Dict[str, Any], seed: int, label: str,
                        timings: Dict[str, float]) -> Tuple[Any, Dict[str, np.ndarray]]:
    """The batch on the device, and slogdet's and det's outputs on the host."""
    jnp = jax.numpy
    started = time.perf_counter()
    x = draw(jax, compat, plan, seed)
    compat.block_until_ready(x)
    timings["draw_s"] = time.perf_counter() - started
    _progress(f"{label}: drew {gb(x.nbytes)} on {plan['backend']} in {timings['draw_s']:.1f} s")

    # Compiled apart from the run, so slogdet_s and det_s are the device's own seconds (waited for), not the
    # compiler's or the copy back to the host.
    started = time.perf_counter()
    slogdet = jax.jit(jnp.linalg.slogdet).lower(x).compile()
    det = jax.jit(jnp.linalg.det).lower(x).compile()
    timings["compile_s"] = time.perf_counter() - started
    started = time.perf_counter()
    sign, logabsdet = compat.block_until_ready(slogdet(x))
    timings["slogdet_s"] = time.perf_counter() - started
    outputs = {"sign": np.asarray(sign), "logabsdet": np.asarray(logabsdet)}
    del sign, logabsdet
    started = time.perf_counter()
    value = compat.block_until_ready(det(x))
    timings["det_s"] = time.perf_counter() - started
    outputs["det"] = np.asarray(value)
    del value
    _progress(f"{label}: compiled in {timings['compile_s']:.1f} s; on {plan['backend']}: slogdet "
              f"{timings['slogdet_s']:.3f} s, det {timings['det_s']:.3f} s")
    return x, outputs


def _chunk_rows(n: int) -> int:
    return max(1, CHUNK_BYTES // (n * n * 8))


def _judge_ranges(x: Any, outputs: Dict[str, np.ndarray], ranges: List[Tuple[int, int]], judged: "_Judged",
                  n: int, dtype: str) -> None:
    """Judge every entry in the ranges, a chunk of rows at a time."""
    chunk = _chunk_rows(n)
    for lo, hi in merge_ranges(ranges):
        for start in range(lo, hi, chunk):
            stop = min(hi, start + chunk)
            rows = np.asarray(x[start:stop])  # slice on the device, then move only these rows
            judged.add(np.arange(start, stop), rows, outputs, n, dtype)


def _crosscheck_boundary(x: Any, boundaries: List[Dict[str, Any]]) -> Optional[float]:
    """Boundary windows' references, recomputed by scipy's LU: the yardstick must be sound."""
    crosscheck_rows = [b["checked"] for b in boundaries if b["checked"]]
    if not crosscheck_rows:
        return None
    lo, hi = crosscheck_rows[0]
    rows = np.asarray(x[lo:hi + 1])
    return _scipy_crosscheck(rows, _references(rows)[1])


def _judge_samples(jax: Any, x: Any, outputs: Dict[str, np.ndarray], judged: "_Judged", n: int, dtype: str,
                   parameters: Dict[str, Any]) -> None:
    """Random samples across the batch and every non-finite output not judged yet."""
    batch, samples = x.shape[0], parameters["samples"]
    nonfinite = ~(np.isfinite(outputs["sign"]) & np.isfinite(outputs["logabsdet"]) & np.isfinite(outputs["det"]))
    rng = np.random.default_rng(parameters["seed"])
    sampled = rng.choice(batch, size=min(samples, batch), replace=False) if samples else np.zeros(0, np.int64)
    suspicious = np.flatnonzero(nonfinite)[:MAX_NONFINITE_RECHECK]
    extra = np.setdiff1d(np.union1d(sampled, suspicious), judged.indices()).astype(np.int64)
    chunk = _chunk_rows(n)
    for start in range(0, len(extra), chunk):
        picked = extra[start:start + chunk]
        rows = np.asarray(x[jax.numpy.asarray(picked)])  # gather on the device
        judged.add(picked, rows, outputs, n, dtype)


# --------------------------------------------------------------------------
# Whole run


def _import_jax(dtypes: Sequence[str]) -> Tuple[Any, Any]:
    import jax

    # On a TPU float64 does not run (`tpu_dtypes`), and x64 there only makes index arithmetic emulated int64.
    if "float64" in dtypes and jax.default_backend() != "tpu":
        # Must be set before any array exists, or float64 silently becomes float32.
        jax.config.update("jax_enable_x64", True)
    from repro import compat

    return jax, compat


def plan_cases(parameters: Dict[str, Any], backend: str) -> List[Dict[str, Any]]:
    n = parameters["matrix_size"]
    plans = []
    for dtype in parameters["dtypes"]:
        itemsize = np.dtype(dtype).itemsize
        batches = parameters["batches"]
        sizes = auto_batches(n, itemsize, parameters["window"], backend) if batches == "auto" else list(batches)
        for batch in sizes:
            plans.append({"dtype": dtype, "batch": batch, "n": n, "backend": backend,
                          "memory": memory_plan(n, dtype, batch)})
    return plans


def summarize(cases: List[Dict[str, Any]]) -> Dict[str, Any]:
    """evidence.summary: the flat key figures of docs/architecture.md."""
    ran = [case for case in cases if case["error"] is None]
    bad = sum(case["comparison"]["bad_count"] for case in ran)
    checked = sum(case["checked_count"] for case in ran)
    errors = [case["comparison"]["max_rel_error"] for case in ran if case["comparison"]["max_rel_error"] is not None]
    firsts = [(case["comparison"]["first_bad_byte_offset"], case["comparison"]["first_bad_index"])
              for case in ran if case["comparison"]["first_bad_index"] is not None]
    first_offset, first_index = min(firsts) if firsts else (None, None)
    return {
        "max_rel_error": max(errors) if errors else None,
        "bad_count": bad,
        "bad_fraction": bad / checked if checked else None,
        "first_bad_index": first_index,
        "first_bad_byte_offset": first_offset,
        # Over every entry of every batch, not only the checked ones: these are free.
        "nan_count": sum(case["whole_batch"]["nan_count"] for case in ran),
        "inf_count": sum(case["whole_batch"]["inf_count"] for case in ran),
        "crossed_boundary": any(case["crossed"] for case in ran),
        "largest_bytes": max((case["bytes"] for case in ran), default=0),
        "checked_count": checked,
    }


def _say_plan(plans: List[Dict[str, Any]], backend: str) -> None:
    for plan in plans:
        memory = plan["memory"]
        _progress(f"plan: {plan['dtype']} batch {plan['batch']} × {plan['n']}×{plan['n']}: "
                  f"input {gb(memory['input_bytes'])}, device peak ≈ {gb(memory['device_peak_bytes'])}, "
                  f"host working ≈ {gb(memory['host_working_bytes'])}")
    available = mem_available_bytes()
    _progress(f"memory: MemAvailable {gb(available) if available is not None else 'unknown'}, "
              f"backend {backend}")


def _run_cases(jax: Any, compat: Any, plans: List[Dict[str, Any]],
               parameters: Dict[str, Any]) -> Tuple[List[Dict[str, Any]], bool]:
    """Every case's result, and whether all of them ran (a failed case is kept with its error)."""
    cases = []
    completed = True
    for plan in plans:
        try:
            cases.append(run_case(jax, compat, plan, parameters))
        except (RuntimeError, MemoryError) as error:
            # JAX's runtime errors (XlaRuntimeError, e.g. RESOURCE_EXHAUSTED) and host memory: the run is
            # cut short, not wrong. Anything else is the repro's own bug: it crashes the run rather than
            # become a finding about the release.
            completed = False
            _progress(f"{plan['dtype']} batch {plan['batch']}: failed: {type(error).__name__}: {error}")
            cases.append({"dtype": plan["dtype"], "batch": plan["batch"], "n": plan["n"],
                          "bytes": plan["memory"]["input_bytes"], "memory": plan["memory"],
                          "error": f"{type(error).__name__}: {str(error)[:500]}"})
            gc.collect()
    return cases, completed


def run(parameters: Dict[str, Any]) -> Dict[str, Any]:
    """Plan, check memory, run every case; the RESULT.json object. Raises DoesNotFit."""
    jax, compat = _import_jax(parameters["dtypes"])
    from repro.environment import describe_environment

    backend = jax.default_backend()
    device = jax.devices()[0]
    chip = None
    if backend == "tpu":
        plans, chip = plan_chip_cases(jax, compat, parameters, device)
        _progress(chip_sentence(chip))
    else:
        plans = plan_cases(parameters, backend)
    _say_plan(plans, backend)
    check_fits(plans, backend, device, parameters["max_memory_gb"])
    cases, completed = _run_cases(jax, compat, plans, parameters)
    summary = summarize(cases)
    ran = [case for case in cases if case["error"] is None]
    verdict, reason = tolerance.correctness_verdict(
        backend=backend,
        bad_count=summary["bad_count"],
        checked_count=summary["checked_count"],
        checked_past_boundary=sum(case["checked_past_boundary"] for case in ran if case["crossed"]),
        crossed_boundary=summary["crossed_boundary"],
        completed=completed,
        largest_bytes=summary["largest_bytes"],
        max_rel_error=summary["max_rel_error"],
        first_bad_index=summary["first_bad_index"],
        first_bad_byte_offset=summary["first_bad_byte_offset"],
        first_failure=next((case["error"][:200] for case in cases if case["error"] is not None), None),
    )
    if chip is not None:
        reason = f"{reason} {chip_sentence(chip)}"
    dtypes = chip["dtypes"] if chip is not None else parameters["dtypes"]
    return {
        "check": "correctness",
        "verdict": verdict,
        "reason": reason,
        "environment": describe_environment(),
        # "auto" resolved: the batch sizes that actually ran, per dtype.
        "parameters": {**parameters, "batches_resolved": {
            dtype: [plan["batch"] for plan in plans if plan["dtype"] == dtype] for dtype in dtypes}},
        "evidence": {
            # On a TPU: how the batches were sized to the chip, and what could not be crossed and why.
            "chip": chip,
            "summary": summary,
            "cases": cases,
            "completed": completed,
            "tolerance": {
                "backward_error": "β = n·eps (Wilkinson's γ_n, growth factor 1)",
                "bound": "|Δ log|det|| ≤ −n·log(1 − κ₁β) per precision, plus pivot-log rounding; "
                         "entries with κ₁β ≥ 1 are undetermined and never flagged",
            },
        },
    }


def human_summary(result: Dict[str, Any]) -> str:
    lines = [f"verdict: {result['verdict']}", f"reason:  {result['reason']}", ""]
    header = f"{'dtype':<8} {'batch':>10} {'bytes':>15} {'crossed':>7} {'checked':>8} {'bad':>7} {'max rel err':>12} {'first bad':>10}"
    lines += [header, "-" * len(header)]
    for case in result["evidence"]["cases"]:
        if case["error"] is not None:
            lines.append(f"{case['dtype']:<8} {case['batch']:>10} {case['bytes']:>15,}  failed: {case['error'][:60]}")
            continue
        comparison = case["comparison"]
        error = comparison["max_rel_error"]
        lines.append(
            f"{case['dtype']:<8} {case['batch']:>10} {case['bytes']:>15,} {'yes' if case['crossed'] else 'no':>7} "
            f"{case['checked_count']:>8} {comparison['bad_count']:>7} "
            f"{'n/a' if error is None else format(error, '.3g'):>12} "
            f"{'-' if comparison['first_bad_index'] is None else comparison['first_bad_index']:>10}"
        )
    for case in result["evidence"]["cases"]:
        comparison = case.get("comparison") or {}
        if comparison.get("first_bad_index") is not None:
            lines.append(
                f"{case['dtype']} batch {case['batch']}: errors start after checked index "
                f"{comparison['last_good_before_first_bad']} and by index {comparison['first_bad_index']} "
                f"(byte offset {comparison['first_bad_byte_offset']:,}); bad e.g. {comparison['bad_indices'][:5]}"
            )
    boundaries = sorted({(b["name"], b["index"]) for case in result["evidence"]["cases"] if case["error"] is None
                         for b in case["boundaries"] if b["in_batch"]})
    if boundaries:
        lines.append("")
        lines.append("boundary windows checked (±{}): ".format(result["parameters"]["window"])
                     + ", ".join(f"{name} at index {index}" for name, index in boundaries))
    return "\n".join(lines)


def main(argv: Optional[Sequence[str]] = None, script: bool = False) -> int:
    """The repro; ``script``: run as ``python -m repro.correctness``, so it ends as soon as its result is out
    (`repro.cli.exit_now`)."""
    try:
        out, parameters = parse_parameters(sys.argv[1:] if argv is None else argv)
    except UsageError as error:
        print(f"error: {error}", file=sys.stderr)
        return EXIT_USAGE
    started = time.perf_counter()
    try:
        result = run(parameters)
    except DoesNotFit as error:
        print(f"error: does not fit: {error}", file=sys.stderr)
        return EXIT_REFUSED
    result["evidence"]["duration_s"] = round(time.perf_counter() - started, 2)
    write_result(out, result)
    print(human_summary(result))
    # Its name only: the kit passes a path in its scratch folder, gone once the run is over,
    # and these last lines are quoted in reports (a bisect's probe output).
    _progress(f"wrote {os.path.basename(out)}")
    if script:
        exit_now(EXIT_OK)
    return EXIT_OK


if __name__ == "__main__":
    sys.exit(main(script=True))
