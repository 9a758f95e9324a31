"""PNG plots for the report: the only module that imports matplotlib.

* ``scaling-<backend>.png``: jit time against device count, slogdet next to
  the control (same program with a sum instead of slogdet), one panel per
  release. Without timing detail in a record's evidence, the summary's
  speedups at 2 and 4 devices are drawn instead.
* ``scaling-overview-<backend>.png``: every release on one axis, speedup over
  one device (time on 1 ÷ time on N) against devices: slogdet under jit and
  under shard_map, and the control beside them, with the ideal (N× on N
  devices), so releases compare at a glance.
* ``correctness-<backend>.png``: relative error against batch index around
  the 2**31-byte boundary, one line per release. Without per-index detail,
  the summary's maximum relative error per release is drawn instead.

A plot whose data is missing is skipped with a note; a missing matplotlib
skips them all with a note. The report builds either way.
"""

from __future__ import annotations

import hashlib
import io
import json
import logging
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from repro.contract import strict_json

from ..records import Verdict
from ..atomic_files import atomic_write_bytes, atomic_write_text
from .plot_data import (
    BoundaryWindow,
    TimingPoint,
    boundary_windows,
    error_series,
    number,
    scaling_curves,
    speedup_curves,
)
from ..checks import SPEEDUP_DEVICE_COUNTS, builtin
from .key_figures import speedups

if TYPE_CHECKING:  # matplotlib is imported where a plot is drawn: a report without plots never loads it
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure
from ..records import (
    JsonTextError,
    LoadedRecord,
    Record,
    newest_per_cell,
    read_json,
    record_backend,
    record_jax,
    release_key,
)

AFFECTED_COLOR = "#c0392b"
UNAFFECTED_COLOR = "#2471a3"
OTHER_COLOR = "#7f8c8d"
CONTROL_COLOR = "#7f8c8d"


@dataclass(frozen=True)
class PlotImage:
    title: str
    path: Path


@dataclass
class PlotOutcome:
    images: list[PlotImage] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


# --------------------------------------------------------------------------
# Drawing


MANIFEST = "plots.json"
MANIFEST_SCHEMA = 1
"""Version of plots.json's layout; a manifest of another version is redrawn, not read."""

DRAWING = 2
"""Version of what is drawn from the same records: bump it when a plot changes, so the images are redrawn.
2: scaling shown as speedup over one device, the control's beside it (was: slogdet ÷ control speedup)."""


def make_plots(records: Iterable[LoadedRecord], out_dir: Path) -> PlotOutcome:
    """Draw every plot the records allow into ``out_dir``; say what was skipped.

    Plots depend on the newest records alone, so when those are the ones the
    last drawing used (``plots.json`` says which) the images are kept as they
    are: matplotlib is most of a report's time, and `nox -s report` is meant
    to take seconds.
    """
    out_dir = Path(out_dir)
    newest, _older = newest_per_cell(records)
    inputs = _inputs_digest(newest.values())
    kept = _unchanged(out_dir, inputs)
    if kept is not None:
        return kept
    outcome = _draw(newest.values(), out_dir)
    if outcome.images:
        manifest = {"schema": MANIFEST_SCHEMA, "drawing": DRAWING, "inputs": inputs,
                    "images": [{"title": i.title, "path": i.path.name} for i in outcome.images],
                    "notes": outcome.notes}
        atomic_write_text(out_dir / MANIFEST, strict_json(manifest, sort_keys=False))
    return outcome


def _inputs_digest(entries: Iterable[LoadedRecord]) -> str:
    blob = json.dumps(sorted((json.dumps(e.record, sort_keys=True, default=str) for e in entries)))
    return hashlib.sha256(blob.encode()).hexdigest()


def _unchanged(out_dir: Path, inputs: str) -> PlotOutcome | None:
    try:
        manifest = read_json(out_dir / MANIFEST)
    except JsonTextError:
        return None
    if (not isinstance(manifest, dict) or manifest.get("schema") != MANIFEST_SCHEMA
            or manifest.get("drawing", 1) != DRAWING or manifest.get("inputs") != inputs):
        return None
    listed = manifest.get("images")
    if not isinstance(listed, list) or not all(isinstance(i, dict) and "title" in i and "path" in i for i in listed):
        return None  # not as this kit writes it: draw again
    images = [PlotImage(str(i["title"]), out_dir / str(i["path"])) for i in listed]
    if not images or not all(image.path.exists() for image in images):
        return None
    notes = manifest.get("notes")
    return PlotOutcome(images=images, notes=[str(n) for n in notes] if isinstance(notes, list) else [])


def _draw(newest: Iterable[LoadedRecord], out_dir: Path) -> PlotOutcome:
    outcome = PlotOutcome()
    # nox logs at DEBUG; matplotlib's font search and PIL's PNG chunks would fill the terminal.
    for name in ("matplotlib", "PIL"):
        logging.getLogger(name).setLevel(logging.WARNING)
    try:
        import matplotlib

        matplotlib.use("Agg")
        # Figure without pyplot: no global state, and about a second less to import.
        from matplotlib.figure import Figure  # noqa: F401
    except ImportError:
        outcome.notes.append("matplotlib is not installed: plots skipped (pip install matplotlib).")
        return outcome
    ran = [e for e in newest if e.record.ran]
    for backend in sorted({record_backend(e.record) for e in ran}):
        on_backend = sorted(
            (e for e in ran if record_backend(e.record) == backend), key=lambda e: release_key(record_jax(e.record))
        )
        # Each check's records go to the figure its module names (kit/checks): one figure each, none for the rest.
        scaling = [e for e in on_backend if _plot_of(str(e.record.check)) == "speedup"]
        correctness = [e for e in on_backend if _plot_of(str(e.record.check)) == "errors"]
        if scaling:
            _plot_scaling(scaling, backend, out_dir, outcome)
        if correctness:
            _plot_correctness(correctness, backend, out_dir, outcome)
    if not ran:
        outcome.notes.append("No record that ran: nothing to plot.")
    return outcome


def _plot_of(check: str) -> str:
    builtin_check = builtin(check)
    return builtin_check.plot if builtin_check is not None else ""


def _label(entry: LoadedRecord, several_machines: bool) -> str:
    release = record_jax(entry.record)
    if several_machines:
        host = (entry.record.host).get("name") or (entry.record.environment).get("hostname")
        return f"{release} ({host})" if host else release
    return release


def _verdict_color(record: Record) -> str:
    colors: dict[str, str] = {Verdict.AFFECTED: AFFECTED_COLOR, Verdict.UNAFFECTED: UNAFFECTED_COLOR}
    return colors.get(str(record.verdict), OTHER_COLOR)


def _evidence(record: Record) -> Mapping[str, object]:
    return record.evidence


def _summary(record: Record) -> Mapping[str, object]:
    summary = _evidence(record).get("summary")
    return summary if isinstance(summary, Mapping) else {}


def _several_machines(entries: Sequence[LoadedRecord]) -> bool:
    machines = {(e.record.host).get("machine_id") for e in entries}
    return len(machines) > 1


def _save(fig: Figure, path: Path, title: str, outcome: PlotOutcome) -> None:
    save_png(fig, path)
    outcome.images.append(PlotImage(title, path))


def save_png(fig: Figure, path: Path) -> None:
    """Write the figure atomically, so a reader never sees half a PNG."""
    png = io.BytesIO()
    fig.savefig(png, dpi=110, format="png")
    atomic_write_bytes(path, png.getvalue())


def _plot_scaling(entries: list[LoadedRecord], backend: str, out_dir: Path, outcome: PlotOutcome) -> None:
    """Time against devices per release; speedups from the summary when there is no timing detail."""
    timed = [(e, scaling_curves(_evidence(e.record))) for e in entries]
    with_points = [(e, c) for e, c in timed if len(c.get(("jit", "forward", "slogdet"), [])) >= 2]
    if not with_points:
        _plot_summary_speedups(entries, backend, out_dir, outcome)
        return
    _plot_timing_panels(with_points, backend, _several_machines(entries), out_dir, outcome)
    _plot_speedup_overview(entries, backend, out_dir, outcome)
    missing = [record_jax(e.record) for e, c in timed if all(e is not w for w, _ in with_points)]
    if missing:
        outcome.notes.append(f"Scaling on {backend}: no timing detail for {', '.join(missing)}.")


Curves = dict[tuple[str, str, str], list[TimingPoint]]


def _plot_timing_panels(with_points: list[tuple[LoadedRecord, Curves]], backend: str, several: bool,
                        out_dir: Path, outcome: PlotOutcome) -> None:
    """One panel per release: slogdet and control times under jit and shard_map, with the ideal line."""
    from matplotlib.figure import Figure

    ncols = min(4, len(with_points))
    nrows = math.ceil(len(with_points) / ncols)
    fig = Figure(figsize=(3.4 * ncols, 2.9 * nrows + 0.7))
    axes = fig.subplots(nrows, ncols, squeeze=False)
    for ax in axes.flat[len(with_points):]:
        ax.set_visible(False)
    for ax, (entry, curves) in zip(axes.flat, with_points):
        _draw_timing_panel(ax, entry, curves, several)
    axes.flat[0].legend(fontsize=6)
    fig.suptitle(f"Sharded slogdet vs control (sum), {backend}: red affected, blue unaffected; "
                 "bars are the IQR", fontsize=9)
    fig.tight_layout()
    title = f"Scaling on {backend}: time vs device count"
    _save(fig, out_dir / f"scaling-{backend}.png", title, outcome)


def _draw_timing_panel(ax: Axes, entry: LoadedRecord, curves: Curves, several: bool) -> None:
    color = _verdict_color(entry.record)
    all_devices: set[int] = set()
    for mode, style in (("jit", "-"), ("shard_map", "--")):
        for loss, line_color, marker in (("slogdet", color, "o"), ("control", CONTROL_COLOR, "s")):
            points = curves.get((mode, "forward", loss), [])
            if len(points) < 2:
                continue
            devices = [p.devices for p in points]
            all_devices.update(devices)
            medians = [p.median_s * 1e3 for p in points]
            low = [max(0.0, m - (p.q1_s * 1e3 if p.q1_s is not None else m)) for m, p in zip(medians, points)]
            high = [max(0.0, (p.q3_s * 1e3 if p.q3_s is not None else m) - m) for m, p in zip(medians, points)]
            ax.errorbar(devices, medians, yerr=[low, high], fmt=marker + style, color=line_color,
                        markersize=4, capsize=2, linewidth=1.2, label=f"{loss}, {mode}")
    control = curves.get(("jit", "forward", "control"), [])
    if control:
        base = control[0]
        top = max(all_devices)
        ax.plot([base.devices, top], [base.median_s * 1e3, base.median_s * 1e3 * base.devices / top], ":",
                color=CONTROL_COLOR, linewidth=0.8, label="ideal")
    ticks = sorted(all_devices)
    ax.set_xscale("log", base=2)
    ax.set_xticks(ticks, [str(d) for d in ticks])
    ax.set_title(f"jax {_label(entry, several)}: {entry.record.verdict}", fontsize=9)
    ax.set_xlabel("devices", fontsize=8)
    ax.set_ylabel("forward time, median (ms)", fontsize=8)
    ax.tick_params(labelsize=7)
    ax.set_ylim(bottom=0)
    ax.grid(alpha=0.3)


SPEEDUP_LABEL = "speedup over 1 device (time on 1 ÷ time on N)"

# The overview's panels: slogdet under each mode, and the control (the same program with a sum) beside it.
OVERVIEW_PANELS = (("slogdet", "jit"), ("slogdet", "shard_map"), ("control", "jit"))


def _plot_speedup_overview(entries: list[LoadedRecord], backend: str, out_dir: Path,
                           outcome: PlotOutcome) -> None:
    """Every release on one axis per panel: speedup over one device against devices, so releases compare at a
    glance; the dotted line is the ideal (N times faster on N devices)."""
    from matplotlib import colormaps
    from matplotlib.figure import Figure

    several = _several_machines(entries)
    series = [(e, {loss: speedup_curves(_evidence(e.record), loss) for loss in ("slogdet", "control")})
              for e in entries]
    series = [(e, curves) for e, curves in series if any(curves.values())]
    panels = [(loss, mode) for loss, mode in OVERVIEW_PANELS if any(mode in curves[loss] for _, curves in series)]
    if not panels:
        return
    fig = Figure(figsize=(4.6 * len(panels), 4.2))
    axes = fig.subplots(1, len(panels), squeeze=False, sharey=True)[0]
    palette = colormaps["tab10"]
    ticks = sorted({p[0] for _, curves in series for loss, mode in panels for p in curves[loss].get(mode, [])})
    values = [v for _, curves in series for loss, mode in panels for _, v in curves[loss].get(mode, [])]
    top = max(1.2, max(ticks) * 1.1, max(values) * 1.1)
    for ax, (loss, mode) in zip(axes, panels):
        for i, (entry, curves) in enumerate(series):
            points = curves[loss].get(mode)
            if not points:
                continue
            affected = entry.record.verdict == Verdict.AFFECTED
            ax.plot([p[0] for p in points], [p[1] for p in points], "x--" if affected else "o-",
                    color=palette(i % 10), linewidth=1.3, markersize=5,
                    label=f"{_label(entry, several)} ({entry.record.verdict})")
        ax.plot(ticks, ticks, ":", color=CONTROL_COLOR, linewidth=0.9, label="ideal: N× on N devices")
        ax.axhline(1.0, color=CONTROL_COLOR, linestyle="-", linewidth=0.5)
        ax.set_xscale("log", base=2)
        ax.set_xticks(ticks, [str(t) for t in ticks])
        ax.set_ylim(0, top)
        ax.set_xlabel("devices")
        ax.set_title(f"{'control (sum)' if loss == 'control' else loss} under {mode}", fontsize=9)
        ax.grid(alpha=0.3)
    axes[0].set_ylabel(SPEEDUP_LABEL)
    axes[-1].legend(fontsize=6, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    fig.suptitle(f"Scaling on {backend}, all releases: speedup over one device; dotted = ideal; "
                 "dashed = affected", fontsize=9)
    fig.tight_layout()
    _save(fig, out_dir / f"scaling-overview-{backend}.png",
          f"Scaling on {backend}: speedup over one device vs devices, all releases", outcome)


def _plot_summary_speedups(entries: list[LoadedRecord], backend: str, out_dir: Path,
                           outcome: PlotOutcome) -> None:
    """The fallback: slogdet's speedup over one device at 2 and 4 devices from each record's summary, the
    control's beside it; records that summarised only their ratio (``efficiency_N``) show that, by name."""
    from matplotlib.figure import Figure

    several = _several_machines(entries)
    series: list[tuple[LoadedRecord, list[tuple[int, float]], list[tuple[int, float]]]] = []
    for entry in entries:
        summary = {**speedups(_evidence(entry.record)), **_summary(entry.record)}
        slogdet, control = ([(1, 1.0)] + [(n, v) for n in SPEEDUP_DEVICE_COUNTS
                                          if (v := number(summary.get(f"{loss}_speedup_{n}"))) is not None]
                            for loss in ("slogdet", "control"))
        if len(slogdet) > 1:
            series.append((entry, slogdet, control))
    if series:
        ylabel, title, what = SPEEDUP_LABEL, f"Scaling on {backend}: speedup over one device", "speedups"
    else:  # older records: only the ratio was summarised
        for entry in entries:
            given = _summary(entry.record)
            ratio = [(1, 1.0)] + [(n, v) for n in SPEEDUP_DEVICE_COUNTS
                                  if (v := number(given.get(f"efficiency_{n}"))) is not None]
            if len(ratio) > 1:
                series.append((entry, ratio, []))
        ylabel, what = "slogdet speedup ÷ control speedup", "the slogdet ÷ control speedup ratio"
        title = f"Scaling on {backend}: slogdet speedup ÷ control speedup"
    if not series:
        outcome.notes.append(f"Scaling plot on {backend} skipped: no timing detail or speedups in the records.")
        return
    fig = Figure(figsize=(6.4, 4.0))
    ax = fig.subplots()
    for entry, points, control in series:
        ax.plot([p[0] for p in points], [p[1] for p in points], "o-",
                color=_verdict_color(entry.record), alpha=0.85, label=_label(entry, several))
        if len(control) > 1:
            ax.plot([p[0] for p in control], [p[1] for p in control], ":", color=CONTROL_COLOR, linewidth=0.8)
        ax.annotate(_label(entry, several), points[-1], fontsize=7, xytext=(4, 0), textcoords="offset points",
                    va="center")
    ax.axhline(1.0, color=CONTROL_COLOR, linestyle="-", linewidth=0.5)
    ax.set_xscale("log", base=2)
    ax.set_xticks([1, 2, 4], ["1", "2", "4"])
    ax.set_ylim(0, max(1.2, max(p[1] for _, pts, ctl in series for p in [*pts, *ctl]) * 1.1))
    ax.set_xlabel("devices")
    ax.set_ylabel(ylabel)
    ax.set_title(f"Sharded slogdet scaling on {backend} (red: affected, blue: unaffected; dotted grey: control)",
                 fontsize=9)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    _save(fig, out_dir / f"scaling-{backend}.png", title, outcome)
    outcome.notes.append(f"Scaling on {backend}: no timing detail in the records; {what} from the summary.")


def _plot_correctness(entries: list[LoadedRecord], backend: str, out_dir: Path, outcome: PlotOutcome) -> None:
    from matplotlib.figure import Figure

    several = _several_machines(entries)
    detailed = [(e, s) for e in entries if (s := error_series(_evidence(e.record))) is not None]
    if detailed:
        boundary = next((s.boundary_index for _, s in detailed if s.boundary_index is not None), None)
        if boundary is None:
            first_bad = [number(_summary(e.record).get("first_bad_index")) for e, _ in detailed]
            boundary = next((b for b in first_bad if b is not None), None)
        offset = int(boundary) if boundary is not None else 0
        fig = Figure(figsize=(7.0, 4.2))
        ax = fig.subplots()
        floor = 1e-17
        for entry, series in detailed:
            affected = entry.record.verdict == Verdict.AFFECTED
            ax.plot([i - offset for i in series.index], [max(v, floor) for v in series.rel_error],
                    "x-" if affected else ".-", markersize=4, linewidth=1.2 if affected else 0.8,
                    color=_verdict_color(entry.record), alpha=0.8, label=_label(entry, several))
        if boundary is not None:
            ax.axvline(0, color="black", linestyle="--", linewidth=0.8, label="2**31-byte boundary")
        ax.set_yscale("log")
        ax.set_xlabel(f"batch index − {offset}" if offset else "batch index")
        ax.set_ylabel("relative error vs scipy")
        ax.set_title(f"det/slogdet error around the 2**31-byte boundary, {backend}", fontsize=10)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7, ncol=2)
        fig.tight_layout()
        _save(fig, out_dir / f"correctness-{backend}.png", f"Correctness on {backend}: error vs batch index",
              outcome)
        missing = [record_jax(e.record) for e in entries if all(e is not d for d, _ in detailed)]
        if missing:
            outcome.notes.append(f"Correctness on {backend}: no per-index errors for {', '.join(missing)}.")
        return
    windows = [(e, w) for e in entries if (w := boundary_windows(_evidence(e.record)))]
    if windows:
        _plot_boundary_windows(windows, backend, several, out_dir, outcome)
        return
    points = [(e, err) for e in entries if (err := number(_summary(e.record).get("max_rel_error"))) is not None]
    if not points:
        outcome.notes.append(f"Correctness plot on {backend} skipped: no errors in the records.")
        return
    fig = Figure(figsize=(max(5.0, 0.45 * len(points) + 2), 3.8))
    ax = fig.subplots()
    labels = [_label(e, several) for e, _ in points]
    x = list(range(len(points)))
    ax.scatter(x, [max(err, 1e-17) for _, err in points], c=[_verdict_color(e.record) for e, _ in points], zorder=3)
    ax.set_xticks(x, labels, rotation=45, ha="right", fontsize=8)
    ax.set_yscale("log")
    ax.set_ylabel("max relative error vs scipy")
    ax.set_title(f"Large-batch det/slogdet, max error per release, {backend}\n(red: affected, blue: unaffected)",
                 fontsize=10)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    _save(fig, out_dir / f"correctness-{backend}.png", f"Correctness on {backend}: max error per release", outcome)
    outcome.notes.append(f"Correctness on {backend}: no per-index errors in the records; max error per release.")


def _plot_boundary_windows(
    windows: list[tuple[LoadedRecord, list[BoundaryWindow]]],
    backend: str,
    several: bool,
    out_dir: Path,
    outcome: PlotOutcome,
) -> None:
    from matplotlib.figure import Figure

    rows = [(entry, w) for entry, ws in windows for w in ws]
    fig = Figure(figsize=(7.0, 0.45 * len(rows) + 1.6))
    ax = fig.subplots()
    labels = []
    for y, (entry, window) in enumerate(rows):
        lo, hi = window.checked
        ax.plot([lo, hi], [y, y], color="#d5d8dc", linewidth=8, solid_capstyle="butt", zorder=1)
        if window.bad:
            ax.scatter(window.bad, [y] * len(window.bad), marker="|", s=120, color=AFFECTED_COLOR, zorder=3)
        labels.append(f"{_label(entry, several)} {window.dtype}")
    ax.axvline(0, color="black", linestyle="--", linewidth=0.8)
    ax.set_yticks(range(len(rows)), labels, fontsize=8)
    ax.invert_yaxis()
    ax.set_xlabel("batch index − first index past 2**31 bytes (grey: checked, red: wrong result)")
    ax.set_title(f"Large-batch det/slogdet around the 2**31-byte boundary, {backend}", fontsize=10)
    ax.grid(axis="x", alpha=0.3)
    fig.tight_layout()
    _save(fig, out_dir / f"correctness-{backend}.png", f"Correctness on {backend}: wrong results by batch index",
          outcome)
    outcome.notes.append(f"Correctness on {backend}: the records hold bad indices, not per-index errors; "
                         "the plot shows where results went wrong.")
