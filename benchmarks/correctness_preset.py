"""Wall time and peak memory of the issue-24843 correctness preset in one environment.

    python benchmarks/correctness_preset.py --python /tmp/cenvs/jax-0.4.35/bin/python

Runs `python -m repro.correctness --preset issue-24843` (1,500,000 × 20×20
float32, 2.4 GB) on CPU in the given interpreter, as a child process, and
prints its wall time, peak RSS (getrusage of the child, so the figure is the
repro's own and not this script's), the peak over the input's size against
issue 28's target (at most 2×; it was 2.6× with jax 0.4.35, 5.77 GiB, and is
2.2× since the batch is drawn a chunk at a time: `correctness_peak_parts.py`
says what the rest is made of) and the verdict. Extra arguments after `--` go
to the repro unchanged. It needs about 2.3× the input (5.2 GiB) free: run it
once, on a quiet machine.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import List, Optional, Sequence

REPO_ROOT = Path(__file__).resolve().parent.parent
RATIO_TARGET = 2.0


def run_preset(python: str, extra: Sequence[str]) -> int:
    with tempfile.TemporaryDirectory(prefix="correctness-bench-") as tmp:
        out = Path(tmp) / "result.json"
        command: List[str] = [python, "-m", "repro.correctness", "--out", str(out), "--preset", "issue-24843", *extra]
        env = dict(os.environ)
        env["PYTHONPATH"] = str(REPO_ROOT) + os.pathsep + env.get("PYTHONPATH", "")
        # Pin the repro to CPU even where a GPU wheel is installed: this is the CPU figure.
        env["JAX_PLATFORMS"] = "cpu"
        print("running: " + " ".join(command), file=sys.stderr, flush=True)
        started = time.perf_counter()
        completed = subprocess.run(command, cwd=REPO_ROOT, env=env, stdout=subprocess.PIPE, text=True)
        wall = time.perf_counter() - started
        # ru_maxrss of RUSAGE_CHILDREN is the largest of the waited-for children: here, only the repro.
        peak_kib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
        verdict, input_bytes = "n/a", None
        if out.exists():
            result = json.loads(out.read_text(encoding="utf-8"))
            summary = result["evidence"]["summary"]
            verdict = f"{result['verdict']} (max rel error {summary['max_rel_error']}, checked {summary['checked_count']})"
            input_bytes = summary["largest_bytes"]
    print(f"python:    {python}")
    print(f"exit code: {completed.returncode}")
    print(f"wall time: {wall:.1f} s")
    print(f"peak RSS:  {peak_kib / 2**20:.2f} GiB")
    if input_bytes:
        ratio = peak_kib * 1024 / input_bytes
        print(f"peak / input: {ratio:.2f}x of {input_bytes / 2**30:.2f} GiB "
              f"(target <= {RATIO_TARGET}x: {'met' if ratio <= RATIO_TARGET else 'MISSED'})")
    print(f"verdict:   {verdict}")
    return completed.returncode


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--python", required=True, help="the environment's python, with jax, numpy and scipy")
    parser.add_argument("extra", nargs="*", help="after --: more repro.correctness flags")
    args = parser.parse_args(argv)
    return run_preset(args.python, args.extra)


if __name__ == "__main__":
    sys.exit(main())
