"""Key figures: the few numbers from a record's summary that show its verdict, in words."""

from __future__ import annotations

from collections.abc import Mapping

from ..checks import SPEEDUP_DEVICE_COUNTS, builtin
from ..requirements import versions_text
from .plot_data import speedup_curves

# A matrix cell shows an exception's first line up to this many characters; the record keeps all of it.
EXCEPTION_CHARS = 120


def speedups(evidence: object) -> dict[str, float]:
    """``slogdet_speedup_N`` and ``control_speedup_N`` (jit forward) read from the detail (``evidence.scaling``,
    else the timings), for records whose summary predates those keys (it had only their ratio, ``efficiency_N``)."""
    if not isinstance(evidence, dict):
        return {}
    return {f"{loss}_speedup_{devices}": value
            for loss in ("slogdet", "control")
            for devices, value in speedup_curves(evidence, loss).get("jit", [])
            if devices in SPEEDUP_DEVICE_COUNTS}


def key_figure(check: str, summary: Mapping[str, object]) -> str:
    """The few numbers that show a check's verdict, in words: the built-in check's own words, else the first keys."""
    builtin_check = builtin(check)
    if builtin_check is not None:
        return builtin_check.key_figure(summary)
    return "; ".join([f"{k}={v}" for k, v in sorted(summary.items())][:4])


def failure_figure(evidence: object) -> str:
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


def packages_figure(environment: object) -> str:
    """The extra packages a script check ran with (``flax 0.10.1``), from the record's environment."""
    packages = environment.get("packages") if isinstance(environment, Mapping) else None
    if not isinstance(packages, Mapping):
        return ""
    return versions_text(dict(sorted(packages.items())))
