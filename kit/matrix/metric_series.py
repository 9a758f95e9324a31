"""Metrics in the matrix: per check and metric, each release's median and spread, and a plot across releases.

Any check that reports ``metrics`` (a user's script through KIT_RESULT, the
built-in scaling check's key timings) gets a table here and one plot per
metric: the median with its interquartile range, releases in version order,
like asv's graphs. Only the newest record of each cell counts, as in the
matrix itself.
"""

from __future__ import annotations

import hashlib
import json
import logging
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Iterable, Mapping

from ..records import Status
from ..markdown_text import text
from ..metrics import spread_pct, summarise
from .plots import save_png
from repro.contract import strict_json

from ..atomic_files import atomic_write_text
from ..json_types import as_list, as_object
from ..records import JsonTextError, LoadedRecord, read_json, record_backend, record_jax, release_key

MANIFEST = "metrics.json"
MANIFEST_SCHEMA = 1
"""Version of metrics.json's layout (``{"schema", "images": {png name: digest of its data}}``); a manifest of
another version (or none, as before it had one) is not read: every metric plot is drawn again."""


@dataclass
class MetricPoint:
    release: str
    median: float
    q1: float
    q3: float
    n: int

    @property
    def spread_pct(self) -> float:
        return spread_pct(self.median, self.q1, self.q3)


@dataclass
class MetricSeries:
    """One metric of one check on one backend, across releases (oldest first)."""

    check: str
    metric: str
    unit: str
    better: str
    backend: str
    points: list[MetricPoint] = field(default_factory=list)
    plot: str | None = None
    """The plot's path relative to matrix.md, once drawn."""

    @property
    def slug(self) -> str:
        name = f"metric-{self.check}-{self.metric}-{self.backend}"
        return "".join(c if c.isalnum() or c in "-_." else "_" for c in name)


def metric_series(newest: Iterable[LoadedRecord]) -> list[MetricSeries]:
    """Every metric the newest records report, one series per (check, metric, backend)."""
    series: dict[tuple[str, str, str], MetricSeries] = {}
    for entry in newest:
        record = entry.record
        metrics = record.metrics
        if record.status != Status.RAN or not isinstance(metrics, Mapping):
            continue
        for name, value in metrics.items():
            metric = as_object(value)
            samples = metric.get("samples")
            # A null sample is a NaN or infinity the run measured (records are strict JSON): not a time.
            finite = [float(x) for x in samples if isinstance(x, (int, float))] if isinstance(samples, list) else []
            if not finite:
                continue
            key = (str(record.check), str(name), record_backend(record))
            one = series.setdefault(key, MetricSeries(*key[:2], str(metric.get("unit", "")),
                                                      str(metric.get("better", "lower")), key[2]))
            s = summarise(finite)
            one.points.append(MetricPoint(record_jax(record), s.median, s.q1, s.q3, s.n))
    for one in series.values():
        one.points.sort(key=lambda p: release_key(p.release))
    return [series[k] for k in sorted(series)]


def render_metrics(series: list[MetricSeries]) -> list[str]:
    """The matrix.md section: per check and backend, a row per release, a column per metric, plot links."""
    if not series:
        return []
    lines = ["## Metrics (per release: median ± half the interquartile range, samples)", ""]
    groups: dict[tuple[str, str], list[MetricSeries]] = {}
    for one in series:
        groups.setdefault((one.check, one.backend), []).append(one)
    for (check, backend), group in groups.items():
        releases = sorted({p.release for one in group for p in one.points}, key=release_key)
        # A metric's name and unit are a script's words (KIT_RESULT): text, never markup.
        header = ["Release", *(text(f"{one.metric} ({one.unit})" if one.unit else one.metric) for one in group)]
        lines += [f"**{text(check)}** on {text(backend)}", "", "| " + " | ".join(header) + " |",
                  "|" + "---|" * len(header)]
        for release in releases:
            cells = [_cell(next((p for p in one.points if p.release == release), None)) for one in group]
            lines.append("| " + " | ".join([text(release), *cells]) + " |")
        plots = [f"[{text(one.metric)}]({one.plot})" for one in group if one.plot]
        lines += ["", f"{text(', '.join(sorted({one.better for one in group})))} is better. "
                  + ("Plots across releases: " + ", ".join(plots) + "." if plots else ""), ""]
    return lines


def _cell(point: MetricPoint | None) -> str:
    if point is None:
        return "—"
    return f"{point.median:.4g} ±{point.spread_pct / 2:.0f}% ({point.n})"


def plot_metrics(series: list[MetricSeries], out_dir: Path, md_dir: Path) -> list[Path]:
    """Draw one PNG per series (kept when its data has not changed); set each series' ``plot``."""
    manifest_path = out_dir / MANIFEST
    try:
        manifest = as_object(read_json(manifest_path))
    except JsonTextError:
        manifest = {}
    ours = manifest.get("schema") == MANIFEST_SCHEMA
    drawn = manifest.get("images") if ours else {}
    if not isinstance(drawn, dict):
        drawn = {}  # not ours (any more): every plot is drawn again
    paths, now = [], {}
    for one in series:
        path = out_dir / f"{one.slug}.png"
        digest = hashlib.sha256(json.dumps([asdict(p) for p in one.points]).encode()).hexdigest()
        if not (drawn.get(path.name) == digest and path.exists()):
            if not _draw(one, path):
                continue
        now[path.name] = digest
        one.plot = path.relative_to(md_dir).as_posix() if path.is_relative_to(md_dir) else str(path)
        paths.append(path)
    if (now != drawn or not ours) and now:
        atomic_write_text(manifest_path, strict_json({"schema": MANIFEST_SCHEMA, "images": now}))
    return paths


def _draw(one: MetricSeries, path: Path) -> bool:
    """Median with IQR bars, releases in version order; False when matplotlib is missing."""
    for name in ("matplotlib", "PIL"):
        logging.getLogger(name).setLevel(logging.WARNING)
    try:
        import matplotlib

        matplotlib.use("Agg")
        from matplotlib.figure import Figure
    except ImportError:
        return False
    fig = Figure(figsize=(max(5.0, 0.7 * len(one.points) + 2), 3.6))
    ax = fig.add_subplot()
    xs = list(range(len(one.points)))
    medians = [p.median for p in one.points]
    errors = [[p.median - p.q1 for p in one.points], [p.q3 - p.median for p in one.points]]
    ax.errorbar(xs, medians, yerr=errors, fmt="o-", capsize=4, color="#1f77b4", label="median, IQR")
    ax.set_xticks(xs)
    ax.set_xticklabels([p.release for p in one.points], rotation=45, ha="right")
    ax.set_ylim(bottom=0)
    ax.set_xlabel("jax release")
    ax.set_ylabel(f"{one.metric} ({one.unit})" if one.unit else one.metric)
    ax.set_title(f"{one.check} · {one.metric} on {one.backend} ({one.better} is better)", fontsize=10)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    save_png(fig, path)
    return True


def to_json(series: list[MetricSeries]) -> list[dict[str, object]]:
    """The series as matrix.json holds them (the JSON edge)."""
    return [{**asdict(one), "points": [{**asdict(p), "spread_pct": round(p.spread_pct, 2)} for p in one.points]}
            for one in series]
