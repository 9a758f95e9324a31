"""What the plots read from a record's evidence (tolerant: the layout is the repro's, not ours).

No matplotlib here: these turn ``evidence.timings``, ``evidence.scaling`` and
``evidence.cases`` into plain series that `kit.matrix.plots` draws and tests check.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass




@dataclass(frozen=True)
class TimingPoint:
    """Median jit time (seconds) of one loss at one device count, with its IQR."""

    devices: int
    median_s: float
    q1_s: float | None = None
    q3_s: float | None = None


@dataclass(frozen=True)
class ErrorSeries:
    index: list[int]
    rel_error: list[float]
    boundary_index: float | None


def objects(value: object) -> list[Mapping[str, object]]:
    """The objects of an evidence list; [] for anything else (a record is a file anyone can edit)."""
    return [item for item in value if isinstance(item, Mapping)] if isinstance(value, list) else []


def number(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value) if math.isfinite(float(value)) else None


def scaling_curves(evidence: Mapping[str, object]) -> dict[tuple[str, str, str], list[TimingPoint]]:
    """Timing curves from ``evidence.timings`` as repro.scaling writes it.

    Each timing entry is ``{mode, pass, loss, devices, median_s, q1_s, q3_s,
    ...}``; the result maps (mode, pass, loss) to points sorted by device
    count. Entries without a usable median are left out; no timings, no curves.
    """
    curves: dict[tuple[str, str, str], list[TimingPoint]] = {}
    timings = evidence.get("timings")
    if not isinstance(timings, list):
        return curves
    for item in timings:
        if not isinstance(item, Mapping):
            continue
        devices = item.get("devices")
        median = number(item.get("median_s"))
        if not isinstance(devices, int) or isinstance(devices, bool) or median is None:
            continue
        key = (str(item.get("mode", "jit")), str(item.get("pass", "forward")), str(item.get("loss", "slogdet")))
        curves.setdefault(key, []).append(
            TimingPoint(devices, median, number(item.get("q1_s")), number(item.get("q3_s")))
        )
    for points in curves.values():
        points.sort(key=lambda p: p.devices)
    return curves


def error_series(evidence: Mapping[str, object]) -> ErrorSeries | None:
    """Relative error per batch index from a correctness record's evidence, or None.

    Searches the evidence (three levels deep, the summary excepted) for
    parallel ``index``/``rel_error`` lists or a list of ``{index, rel_error}``
    points, and returns the longest series found.
    """
    found: list[ErrorSeries] = []

    def visit(value: object, depth: int) -> None:
        series = _series_from(value)
        if series is not None:
            found.append(series)
            return
        if depth >= 3:
            return
        if isinstance(value, Mapping):
            for key, inner in value.items():
                if key != "summary":
                    visit(inner, depth + 1)
        elif isinstance(value, list):
            for inner in value:
                visit(inner, depth + 1)

    visit(evidence, 0)
    return max(found, key=lambda s: len(s.index)) if found else None


def _series_from(value: object) -> ErrorSeries | None:
    if isinstance(value, Mapping):
        index = value.get("index", value.get("indices", value.get("batch_index")))
        errors = value.get("rel_error", value.get("rel_errors", value.get("relative_error")))
        if isinstance(index, list) and isinstance(errors, list) and index and len(index) == len(errors):
            pairs = [
                (int(i), e)
                for i, raw in zip(index, errors)
                if isinstance(i, int) and (e := number(raw)) is not None
            ]
            if pairs:
                boundary = number(value.get("boundary_index", value.get("first_index_past_boundary")))
                return ErrorSeries([p[0] for p in pairs], [p[1] for p in pairs], boundary)
    if isinstance(value, list) and value and all(isinstance(v, Mapping) for v in value):
        pairs = []
        for item in value:
            i = item.get("index", item.get("batch_index"))
            e = number(item.get("rel_error", item.get("relative_error")))
            if isinstance(i, int) and e is not None:
                pairs.append((i, e))
        if pairs:
            pairs.sort()
            return ErrorSeries([p[0] for p in pairs], [p[1] for p in pairs], None)
    return None


@dataclass(frozen=True)
class BoundaryWindow:
    """One checked window around the 2**31-byte boundary, relative to it."""

    dtype: str
    boundary_index: int
    checked: tuple[int, int]
    bad: list[int]


def boundary_windows(evidence: Mapping[str, object]) -> list[BoundaryWindow]:
    """Checked windows and bad indices around the 2**31-byte index, from ``evidence.cases``.

    repro.correctness records, per case, ``boundaries`` (name, index,
    checked [lo, hi]) and ``comparison.bad_indices``; no per-index errors.
    """
    windows: list[BoundaryWindow] = []
    cases = evidence.get("cases")
    for case in cases if isinstance(cases, list) else []:
        if not isinstance(case, Mapping) or case.get("error") is not None:
            continue
        comparison = case.get("comparison") if isinstance(case.get("comparison"), Mapping) else {}
        bad = [i for i in (comparison or {}).get("bad_indices") or [] if isinstance(i, int)]
        for boundary in case.get("boundaries") or []:
            if not isinstance(boundary, Mapping) or boundary.get("name") != "2**31 bytes":
                continue
            index, checked = boundary.get("index"), boundary.get("checked")
            if isinstance(index, int) and isinstance(checked, list) and len(checked) == 2:
                lo, hi = int(checked[0]), int(checked[1])
                windows.append(BoundaryWindow(str(case.get("dtype")), index, (lo - index, hi - index),
                                              sorted(i - index for i in bad if lo <= i <= hi)))
    return windows


def speedup_curves(evidence: Mapping[str, object], loss: str = "slogdet") -> dict[str, list[tuple[int, float]]]:
    """``loss``'s speedup over one device (time on 1 ÷ time on N) against devices, per mode, forward pass.

    From ``evidence.scaling`` where the repro wrote it; otherwise computed
    from the timing medians. Only modes with at least two device counts are returned.
    """
    curves: dict[str, list[tuple[int, float]]] = {}
    for item in objects(evidence.get("scaling")):
        if item.get("pass", "forward") != "forward":
            continue
        devices, value = item.get("devices"), number(item.get(f"{loss}_speedup"))
        if isinstance(devices, int) and not isinstance(devices, bool) and value is not None:
            curves.setdefault(str(item.get("mode", "jit")), []).append((devices, value))
    if not curves:
        curves = _speedups_from_timings(scaling_curves(evidence), loss)
    return {mode: sorted(points) for mode, points in curves.items() if len(points) >= 2}


def _speedups_from_timings(timings: dict[tuple[str, str, str], list[TimingPoint]],
                           loss: str) -> dict[str, list[tuple[int, float]]]:
    curves: dict[str, list[tuple[int, float]]] = {}
    for (mode, pass_, measured), points in timings.items():
        medians = {p.devices: p.median_s for p in points}
        if pass_ != "forward" or measured != loss or 1 not in medians:
            continue
        curves[mode] = [(n, medians[1] / medians[n]) for n in sorted(medians) if medians[n] > 0]
    return curves
