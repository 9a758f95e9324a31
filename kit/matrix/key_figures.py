"""Key figures: the few numbers from a record's summary that show its verdict, in words."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..requirements import versions_text
from .plot_data import speedup_curves

# A matrix cell shows an exception's first line up to this many characters; the record keeps all of it.
EXCEPTION_CHARS = 120


def _num(value: Any, spec: str) -> str | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return format(value, spec)


def lu_fed_by(evidence: Any) -> str | None:
    """Which collectives fed the LU in the case the verdict came from, read from the detail."""
    if not isinstance(evidence, dict) or not isinstance(evidence.get("verdict_from"), dict):
        return None
    source = evidence["verdict_from"]
    for case in evidence.get("structure") or []:
        if isinstance(case, dict) and case.get("loss") == "slogdet" and all(
                case.get(key) == source.get(key) for key in ("mode", "pass", "devices")):
            return ",".join(case.get("lu_fed_by") or [])
    return None


SPEEDUP_DEVICE_COUNTS = (2, 4)
"""The device counts a scaling record's summary gives speedups for."""


def speedups(evidence: Any) -> dict[str, float]:
    """``slogdet_speedup_N`` and ``control_speedup_N`` (jit forward) read from the detail (``evidence.scaling``,
    else the timings), for records whose summary predates those keys (it had only their ratio, ``efficiency_N``)."""
    if not isinstance(evidence, dict):
        return {}
    return {f"{loss}_speedup_{devices}": value
            for loss in ("slogdet", "control")
            for devices, value in speedup_curves(evidence, loss).get("jit", [])
            if devices in SPEEDUP_DEVICE_COUNTS}


def _speedup_words(summary: Mapping[str, Any]) -> str | None:
    """Speedup over one device, slogdet's with the control's beside it: what the timings mean, by name."""
    def at(loss: str) -> list[str]:
        return [f"{text}x @{n}" for n in SPEEDUP_DEVICE_COUNTS
                if (text := _num(summary.get(f"{loss}_speedup_{n}"), ".2f")) is not None]

    slogdet, control = at("slogdet"), at("control")
    if slogdet or control:
        return "speedup over 1 device: " + "; ".join(
            f"{loss} {', '.join(values)}" for loss, values in (("slogdet", slogdet), ("control", control)) if values)
    # Records with neither the keys nor the detail: their ratio, under its own name.
    ratios = [f"{text} @{n}" for n in SPEEDUP_DEVICE_COUNTS
              if (text := _num(summary.get(f"efficiency_{n}"), ".2f")) is not None]
    return "slogdet speedup ÷ control speedup " + ", ".join(ratios) if ratios else None


def key_figure(check: str, summary: Mapping[str, Any]) -> str:
    """The few numbers that show a check's verdict, in words."""
    parts: list[str] = []
    if check == "scaling":
        gathers = summary.get("all_gathers")
        if isinstance(gathers, int):
            parts.append(f"{gathers} all-gather" + ("" if gathers == 1 else "s"))
        fed_by = summary.get("lu_fed_by")
        if isinstance(fed_by, str):
            parts.append(f"LU input via {fed_by}" if fed_by else "no collective before the LU")
        lu, total = summary.get("lu_batch_per_device"), summary.get("global_batch")
        if lu is not None and total is not None:
            devices = summary.get("devices")
            on = f" on {devices} devices" if devices is not None else ""
            parts.append(f"LU batch {lu} per device of {total}{on}")
        timing = _speedup_words(summary)
        if timing:
            parts.append(timing)
        if summary.get("positive_control_ok") is False:
            parts.append("positive control FAILED")
    elif check == "correctness":
        err = _num(summary.get("max_rel_error"), ".1e")
        if err is not None:
            parts.append(f"max rel error {err}")
        bad = summary.get("bad_count")
        first = summary.get("first_bad_index")
        if isinstance(bad, int) and bad > 0:
            parts.append(f"{bad} bad" + (f", first at index {first}" if first is not None else ""))
        elif bad == 0:
            parts.append("none bad")
        for name, label in (("nan_count", "NaN"), ("inf_count", "inf")):
            value = summary.get(name)
            if isinstance(value, int) and value > 0:
                parts.append(f"{value} {label}")
        if summary.get("crossed_boundary") is False:
            parts.append("did not reach 2**31 bytes")
    else:
        parts = [f"{k}={v}" for k, v in sorted(summary.items())][:4]
    return "; ".join(parts)


def failure_figure(evidence: Any) -> str:
    """What a script died of, for its cell: the package it could not import, or the exception's first line."""
    if not isinstance(evidence, Mapping):
        return ""
    imported = evidence.get("import_error")
    if isinstance(imported, Mapping) and imported.get("package"):
        installed = imported.get("installed")
        return f"could not import {imported['package']}" + (f" (from {installed})" if installed else "")
    exception = evidence.get("exception")
    if not isinstance(exception, Mapping) or not exception.get("type"):
        return ""
    first = next((line.strip() for line in str(exception.get("message") or "").splitlines() if line.strip()), "")
    text = f"{exception['type']}: {first}" if first else str(exception["type"])
    return text if len(text) <= EXCEPTION_CHARS else text[: EXCEPTION_CHARS - 1] + "…"


def packages_figure(environment: Any) -> str:
    """The extra packages a script check ran with (``flax 0.10.1``), from the record's environment."""
    packages = environment.get("packages") if isinstance(environment, Mapping) else None
    if not isinstance(packages, Mapping):
        return ""
    return versions_text(dict(sorted(packages.items())))
