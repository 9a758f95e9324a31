"""slogdet on one TPU chip against a matmul control: how its time grows with the batch (issue 48, item 3).

    python benchmarks/tpu_slogdet_chip.py [--sizes 16,32] [--batches 1024,...,65536] [--repeats 5] [--json OUT]

For each matrix size and batch: a float32 batch of standard normal matrices
on the chip, ``jnp.linalg.slogdet`` and a control that touches the same
bytes (``x @ x``, a batched matmul: the MXU's own work), each compiled
first, then timed ``repeats`` times with ``block_until_ready`` (the median,
and the spread as min..max). The table gives milliseconds per call and per
1024 matrices: a kernel that scales with the batch keeps the second column
flat. A colleague measured on a v5e (jax 0.10.2): 4.1 ms per 1024 16×16,
8.4 ms per 1024 32×32, linear in the batch (537 ms for 65536 32×32); the
control 0.2–0.8 ms. Through scripts/tpu-session.sh (one v5e, jax 0.10.2, median of 7):
16×16 5.0 ms at 1024, 4.1 ms per 1024 from 16384 on (262 ms at 65536); 32×32 9.3 ms at 1024,
8.4 ms per 1024 (268 ms at 32768); the control 0.65–4.2 ms: slogdet is linear in the batch,
8–69× the matmul's time.

Runs on whatever ``jax.default_backend()`` is (a CPU run says so in its
header: the figures are then not a chip's). Needs jax and numpy only.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from typing import Any, Callable, Dict, List

BATCHES = [1024 * 2**k for k in range(7)]  # 1024 .. 65536


def _timed(function: Callable[[Any], Any], x: Any, repeats: int) -> List[float]:
    """Seconds per call, each waited for; the first call (compilation) is not among them."""
    import jax

    jax.block_until_ready(function(x))
    seconds = []
    for _ in range(repeats):
        started = time.perf_counter()
        jax.block_until_ready(function(x))
        seconds.append(time.perf_counter() - started)
    return seconds


def measure(sizes: List[int], batches: List[int], repeats: int) -> List[Dict[str, Any]]:
    import jax
    import jax.numpy as jnp

    slogdet = jax.jit(jnp.linalg.slogdet)
    control = jax.jit(lambda x: x @ x)
    rows = []
    for n in sizes:
        for batch in batches:
            x = jax.random.normal(jax.random.PRNGKey(0), (batch, n, n), jnp.float32)
            row: Dict[str, Any] = {"n": n, "batch": batch}
            for name, function in (("slogdet", slogdet), ("matmul", control)):
                seconds = _timed(function, x, repeats)
                row[name] = {"median_ms": statistics.median(seconds) * 1e3,
                             "min_ms": min(seconds) * 1e3, "max_ms": max(seconds) * 1e3}
            rows.append(row)
            print(_line(row), flush=True)
            del x
    return rows


def _line(row: Dict[str, Any]) -> str:
    slog, ctrl = row["slogdet"], row["matmul"]
    per_1024 = slog["median_ms"] * 1024 / row["batch"]
    return (f"{row['n']:>3}×{row['n']:<3} {row['batch']:>7} {slog['median_ms']:>10.2f} {per_1024:>10.2f} "
            f"{slog['min_ms']:>8.2f}..{slog['max_ms']:<8.2f} {ctrl['median_ms']:>10.3f} "
            f"{slog['median_ms'] / max(ctrl['median_ms'], 1e-9):>8.0f}×")


def main(argv: List[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="16,32")
    parser.add_argument("--batches", default=",".join(str(b) for b in BATCHES))
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--json", default=None, help="also write the rows here")
    args = parser.parse_args(argv)
    import jax

    device = jax.devices()[0]
    print(f"jax {jax.__version__} on {jax.default_backend()}: {len(jax.devices())} × "
          f"{getattr(device, 'device_kind', '?')}; float32, median of {args.repeats} (compiled first)", flush=True)
    print(f"{'size':<7} {'batch':>7} {'slogdet ms':>10} {'per 1024':>10} {'min..max':^18} {'matmul ms':>10} "
          f"{'ratio':>9}", flush=True)
    rows = measure([int(s) for s in args.sizes.split(",")], [int(b) for b in args.batches.split(",")], args.repeats)
    if args.json:
        with open(args.json, "w", encoding="utf-8") as out:
            json.dump({"jax": jax.__version__, "backend": jax.default_backend(),
                       "device_kind": getattr(device, "device_kind", None), "rows": rows}, out, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
