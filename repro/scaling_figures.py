"""Figures and the human summary of a scaling run: structure, timings, speedups.

Pure functions over the measured cases (no jax), split from repro/scaling.py,
which measures them.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from typing import Any, Dict, List, Optional

from repro import hlo

LOSSES = ("control", "slogdet")


@dataclass
class Case:
    mode: str
    pass_: str
    loss: str
    devices: int
    evidence: hlo.HloEvidence
    flops: Optional[float]
    times_s: List[float]


# --------------------------------------------------------------------------
# Figures


def fed_by(evidence: hlo.HloEvidence) -> List[str]:
    """The collectives upstream of the LU's operand, by name."""
    return sorted({name for call in evidence.lu_calls for name in call.fed_by})


def structure_record(evidence: hlo.HloEvidence) -> Dict[str, Any]:
    return {
        "collectives": dict(evidence.collectives),
        "lu_batch": evidence.lu_batch,
        "lu_fed_by": fed_by(evidence),
        "program": evidence.program,
        "linalg_calls": [
            {"target": call.target, "kind": call.kind, "operand_shape": list(call.operand_shape or []),
             "batch": call.batch, "shape_source": call.shape_source, "fed_by": list(call.fed_by)}
            for call in evidence.linalg_calls
        ],
    }


def timing_record(times: List[float]) -> Dict[str, Any]:
    """Median, quartiles and range of one case's times; all None for an untimed run (``repeats`` 0)."""
    ordered = sorted(times)
    if not ordered:
        return {"median_s": None, "q1_s": None, "q3_s": None, "min_s": None, "max_s": None, "runs": 0}
    if len(ordered) >= 2:
        q1, _, q3 = statistics.quantiles(ordered, n=4, method="inclusive")
    else:
        q1 = q3 = ordered[0]
    return {"median_s": statistics.median(ordered), "q1_s": q1, "q3_s": q3,
            "min_s": ordered[0], "max_s": ordered[-1], "runs": len(ordered)}


def metrics(cases: List[Case]) -> Dict[str, Any]:
    """The key timings in the check protocol's terms (docs/checks.md, "The protocol"): jit forward, per device count."""
    return {f"{c.loss}_{c.devices}dev_ms": {"unit": "ms", "samples": [t * 1e3 for t in c.times_s], "better": "lower"}
            for c in cases if (c.mode, c.pass_) == ("jit", "forward") and c.times_s}


def scaling_rows(cases: List[Case]) -> List[Dict[str, Any]]:
    """Per mode, pass and device count: each loss's speedup over one device (time on 1 ÷ time on N),
    and ``efficiency``, the slogdet speedup ÷ the control's (what the verdict's timing veto weighs)."""
    median = {(c.mode, c.pass_, c.loss, c.devices): statistics.median(c.times_s) if c.times_s else None
              for c in cases}
    rows = []
    for mode, pass_, loss, devices in median:
        if loss != "slogdet":
            continue
        row: Dict[str, Any] = {"mode": mode, "pass": pass_, "devices": devices,
                               "control_speedup": None, "slogdet_speedup": None, "efficiency": None}
        for name in LOSSES:
            base = median.get((mode, pass_, name, 1))
            here = median.get((mode, pass_, name, devices))
            if base is not None and here:
                row[f"{name}_speedup"] = base / here
        if row["control_speedup"] and row["slogdet_speedup"] is not None:
            row["efficiency"] = row["slogdet_speedup"] / row["control_speedup"]
        rows.append(row)
    return rows


SUMMARY_DEVICE_COUNTS = (2, 4)


def speedup_summary(rows: List[Dict[str, Any]]) -> Dict[str, Optional[float]]:
    """The summary's timing figures: jit forward speedup over one device at 2 and 4 devices, slogdet's and
    the control's side by side (``slogdet_speedup_4``, ``control_speedup_4``; None where not measured).

    Speedups, not their ratio: a ratio named "efficiency" read 3.5 where the
    control (a sum, too small to gain from more devices) got slower and
    slogdet twice as fast, which no reader takes for what it is.
    """
    figures: Dict[str, Optional[float]] = {}
    for devices in SUMMARY_DEVICE_COUNTS:
        row = find(rows, "jit", "forward", devices)
        for loss in ("slogdet", "control"):
            figures[f"{loss}_speedup_{devices}"] = row.get(f"{loss}_speedup")
    return figures


def find(rows: List[Dict[str, Any]], mode: str, pass_: str, devices: int) -> Dict[str, Any]:
    for row in rows:
        if (row["mode"], row["pass"], row["devices"]) == (mode, pass_, devices):
            return row
    return {}


def primary(cases: List[Case], largest: int) -> Optional[Case]:
    """The case the verdict rests on: jit forward slogdet at the largest count."""
    slogdet = [c for c in cases if c.loss == "slogdet" and c.devices == largest]
    for mode, pass_ in (("jit", "forward"), ("jit", "grad")):
        for case in slogdet:
            if (case.mode, case.pass_) == (mode, pass_):
                return case
    return slogdet[0] if slogdet else None


# --------------------------------------------------------------------------
# Output


def human_summary(result: Dict[str, Any], cases: List[Case], rows: List[Dict[str, Any]]) -> str:
    env = result["environment"]
    lines = [
        f"scaling check: jax {env.get('jax')} on {env.get('backend')} ({env.get('device_count')} devices)"
        + (f", compiled for {env['compiled_for']}, not run" if env.get("compiled_for") else ""),
        f"verdict: {result['verdict']}",
        f"reason: {result['reason']}",
        "",
        "structure (compiled HLO, per device):",
        f"  {'mode':<10}{'pass':<9}{'loss':<9}{'dev':>4}{'all-gather':>11}{'collectives':>12}{'LU batch':>10}  LU fed by",
    ]
    for case in cases:
        fed = sorted({n for call in case.evidence.lu_calls for n in call.fed_by})
        lu_batch = case.evidence.lu_batch
        lines.append(
            f"  {case.mode:<10}{case.pass_:<9}{case.loss:<9}{case.devices:>4}{case.evidence.all_gathers:>11}"
            f"{case.evidence.collective_count:>12}{'-' if lu_batch is None else lu_batch:>10}  {', '.join(fed) or '-'}"
        )
    control = result["evidence"].get("positive_control")
    if control is None:  # nothing compiled (the release cannot compile for the target): the reason says why
        return "\n".join(lines + [f"  nothing compiled: {result['reason']}"])
    lines.append(f"  positive control (rows sharded, {control['devices']} dev): "
                 f"{'collective seen' if control['ok'] else 'NO collective: ' + control.get('why_not', 'detector blind')}")
    lines += ["", "timings (ms; median [IQR]; ctl x, det x: speedup over 1 device = time on 1 ÷ time here; "
                  "det/ctl: slogdet speedup ÷ control speedup):"]
    lines.append(f"  {'mode':<10}{'pass':<9}{'dev':>4}{'control':>24}{'slogdet':>24}{'ctl x':>7}{'det x':>7}"
                 f"{'det/ctl':>8}")
    timing = {(c.mode, c.pass_, c.loss, c.devices): timing_record(c.times_s) for c in cases}
    for row in rows:
        cells = []
        for loss in LOSSES:
            t = timing[(row["mode"], row["pass"], loss, row["devices"])]
            cells.append("not timed" if t["median_s"] is None else
                         f"{t['median_s'] * 1e3:.2f} [{t['q1_s'] * 1e3:.2f}-{t['q3_s'] * 1e3:.2f}]")
        lines.append(
            f"  {row['mode']:<10}{row['pass']:<9}{row['devices']:>4}{cells[0]:>24}{cells[1]:>24}"
            f"{_fmt(row['control_speedup']):>7}{_fmt(row['slogdet_speedup']):>7}{_fmt(row['efficiency']):>8}"
        )
    for note in result["evidence"]["notes"]:
        lines.append(f"note: {note}")
    return "\n".join(lines)


def _fmt(value: Optional[float]) -> str:
    return "-" if value is None else f"{value:.2f}"
