"""Optional helper for your own check scripts: time things, report metrics, exit with the verdict.

A check is any script that exits as ``git bisect run`` expects (0 unaffected,
125 inconclusive, 1-127 affected). This module only saves typing; it uses the
standard library alone, so it imports in every release's environment (Python
3.9+, jax 0.4.13 to newest). The kit puts the repository root on PYTHONPATH
when it runs a check; a script of your own project run by hand needs the
kit's folder on its path (docs/checks.md, "Checks outside the kit's folder").
A script says::

    from repro import kitcheck

    samples = kitcheck.time_ms(lambda: f(x).block_until_ready(), repeats=9, warmup=2)
    kitcheck.finish("unaffected", "f is fast", summary={"n": 1024},
                    metrics={"f_ms": kitcheck.metric(samples, unit="ms")})

``finish`` writes the JSON result to the path in ``KIT_RESULT`` (when the kit
set it; run by hand, the script just prints) and exits with the code that
matches the verdict.
"""

from __future__ import annotations

import json
import os
import sys
import time
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence

from repro.contract import EXIT_AFFECTED, EXIT_INCONCLUSIVE, EXIT_UNAFFECTED

EXIT_CODES = {"unaffected": EXIT_UNAFFECTED, "affected": EXIT_AFFECTED, "inconclusive": EXIT_INCONCLUSIVE}


def time_ms(fn: Callable[[], Any], repeats: int = 7, warmup: int = 1) -> List[float]:
    """Wall time of ``fn()`` in milliseconds, ``repeats`` samples after ``warmup`` untimed calls.

    ``fn`` must wait for its own result (``.block_until_ready()``): JAX
    dispatches asynchronously, and timing the dispatch measures nothing.
    """
    for _ in range(warmup):
        fn()
    samples = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - start) * 1e3)
    return samples


def metric(samples: Sequence[float], unit: str = "ms", better: str = "lower") -> Dict[str, Any]:
    """One metric entry as the protocol spells it."""
    if better not in ("lower", "higher"):
        raise ValueError("better must be 'lower' or 'higher'")
    return {"unit": unit, "samples": [float(x) for x in samples], "better": better}


def environment() -> Dict[str, Any]:
    """What ran: jax's version, backend and devices (empty where jax is not importable)."""
    try:
        import jax
    except ImportError:
        return {}
    try:
        devices = jax.devices()
        backend = jax.default_backend()
    except Exception:  # run by hand where no backend starts (a GPU build without its driver): the verdict still counts
        return {"jax": jax.__version__}
    return {"jax": jax.__version__, "backend": backend, "device_count": len(devices),
            "device_kind": devices[0].device_kind if devices else None}


def finish(verdict: str, reason: str = "", summary: Optional[Mapping[str, Any]] = None,
           metrics: Optional[Mapping[str, Mapping[str, Any]]] = None) -> None:
    """Write KIT_RESULT (when set), print a one-line summary, and exit with the verdict's code."""
    if verdict not in EXIT_CODES:
        raise ValueError(f"verdict must be one of {', '.join(EXIT_CODES)}")
    result = {"verdict": verdict, "reason": reason, "summary": dict(summary or {}),
              "metrics": dict(metrics or {}), "environment": environment()}
    path = os.environ.get("KIT_RESULT")
    if path:
        tmp = path + ".tmp"
        with open(tmp, "w", encoding="utf-8") as handle:
            json.dump(result, handle, indent=2)
        os.replace(tmp, path)
    print(f"{verdict.upper()}: {reason}")
    sys.stdout.flush()
    sys.exit(EXIT_CODES[verdict])
