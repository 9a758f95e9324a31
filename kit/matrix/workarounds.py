"""Workarounds the records themselves support, for releases a known problem affects.

A workaround is stated only from measurements: the scaling repro times and
compiles slogdet under ``jit`` (where affected releases all-gather the batch
before the LU) and under ``shard_map`` (where each device factorises its own
share). When an affected release's record shows the LU getting only the
device's share under shard_map, the report says so with the figures.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ..markdown_text import text as escaped
from .plot_data import objects


@dataclass(frozen=True)
class ShardMapFigures:
    """One affected record's evidence that shard_map splits the LU: at its largest device count."""

    release: str
    devices: int
    global_batch: int
    lu_batch_jit: int | None
    lu_batch_shard_map: int
    speedup_jit: float | None
    """slogdet's speedup over one device under jit, at ``devices``."""
    speedup_shard_map: float | None


def shard_map_figures(release: str, evidence: Mapping[str, object]) -> ShardMapFigures | None:
    """The figures when ``evidence`` shows shard_map giving each device only its share; else None."""
    structure = [s for s in objects(evidence.get("structure")) if s.get("loss") == "slogdet"
                 and s.get("pass", "forward") == "forward" and isinstance(s.get("mode"), str)
                 and isinstance(s.get("devices"), int)]
    per_mode = {(s["mode"], s["devices"]): s for s in structure}
    counts = sorted({d for (mode, d) in per_mode if mode == "shard_map" and isinstance(d, int) and d > 1})
    if not counts:
        return None
    devices = counts[-1]
    single = per_mode.get(("shard_map", 1)) or per_mode.get(("jit", 1)) or {}
    sharded = per_mode[("shard_map", devices)]
    global_batch, share = single.get("lu_batch"), sharded.get("lu_batch")
    if not isinstance(global_batch, int) or not isinstance(share, int) or share * devices != global_batch:
        return None
    jit_batch = (per_mode.get(("jit", devices)) or {}).get("lu_batch")
    return ShardMapFigures(
        release=release,
        devices=devices,
        global_batch=global_batch,
        lu_batch_jit=jit_batch if isinstance(jit_batch, int) else None,
        lu_batch_shard_map=share,
        speedup_jit=_speedup(evidence, "jit", devices),
        speedup_shard_map=_speedup(evidence, "shard_map", devices),
    )


def _speedup(evidence: Mapping[str, object], mode: str, devices: int) -> float | None:
    for item in objects(evidence.get("scaling")):
        if (item.get("mode") == mode and item.get("devices") == devices
                and item.get("pass", "forward") == "forward"):
            value = item.get("slogdet_speedup")
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                return float(value)
    return None


def shard_map_text(figures: Sequence[ShardMapFigures]) -> str:
    """One sentence for the report: what shard_map does on the affected releases, measured."""
    if not figures:
        return ""
    shares = {(f.lu_batch_shard_map, f.global_batch, f.devices, f.lu_batch_jit) for f in figures}
    releases = ", ".join(escaped(f.release) for f in figures)  # a record's words: text, never markup
    if len(shares) == 1:
        share, total, devices, under_jit = shares.pop()
        split = f"each device's LU gets only its share ({share} of {total} matrices on {devices} devices"
        split += f"; under jit, {under_jit})" if under_jit is not None else ")"
    else:
        split = "each device's LU gets only its share (" + "; ".join(
            f"{escaped(f.release)}: {f.lu_batch_shard_map} of {f.global_batch} on {f.devices}" for f in figures) + ")"
    speedups = [f"{escaped(f.release)} {f.speedup_shard_map:.2f}x vs {f.speedup_jit:.2f}x" for f in figures
                if f.speedup_shard_map is not None and f.speedup_jit is not None]
    text = f"`shard_map` instead of jit: on {releases} {split}"
    if speedups:
        devices = max(f.devices for f in figures)
        text += f"; slogdet speedup over 1 device @{devices} under shard_map vs jit: " + ", ".join(speedups)
    return text
