"""Wall time of the scaling check as 2 processes vs 1, and of a 2-cell SLURM array end to end.

    python benchmarks/multiprocess_timing.py [--release 0.6.0] [--repeats 3] [--slurm]

Alternates ``nox -s scaling-<release> -- --processes 2`` and ``nox -s
scaling-<release>`` (so both see the same machine conditions), ``--repeats``
times each, and prints each sample, the medians and their ratio. Both sessions
must be warm (run each once first); the 2-process run measures the device
counts it can share equally (2 and 4 of 1,2,4), so it does less timing work and
more start-up (two interpreters, the coordinator, the gloo rendezvous).

With ``--slurm`` it also times ``nox -s matrix -- --slurm --only
0.4.35,<release> --checks scaling --rerun`` end to end on the cluster that
SLURM_CONF names (``scripts/slurm-local.sh up`` starts one here). Records land in
reports/results/ as from any run; do not commit them from a benchmark.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def timed(cmd: list[str]) -> float:
    started = time.perf_counter()
    proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    elapsed = time.perf_counter() - started
    if proc.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed (exit {proc.returncode}):\n{proc.stdout[-2000:]}{proc.stderr[-2000:]}")
    return elapsed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--release", default="0.6.0")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--slurm", action="store_true", help="also time a 2-cell job array end to end")
    args = parser.parse_args()
    session = f"scaling-{args.release}"
    samples: dict[int, list[float]] = {1: [], 2: []}
    for index in range(args.repeats):
        for processes in (2, 1):
            extra = ["--", "--processes", "2"] if processes == 2 else []
            samples[processes].append(timed(["nox", "-s", session, *extra]))
            print(f"sample {index + 1}: {processes} process(es) {samples[processes][-1]:.1f} s", flush=True)
    two, one = statistics.median(samples[2]), statistics.median(samples[1])
    print(f"jax {args.release}: median wall {two:.1f} s with 2 processes, {one:.1f} s with 1 "
          f"(ratio {two / one:.2f}; {args.repeats} samples each)")
    if args.slurm:
        cmd = ["nox", "-s", "matrix", "--", "--slurm", "--only", f"0.4.35,{args.release}", "--checks", "scaling",
               "--rerun"]
        print(f"SLURM array of 2 cells, submission to report: {timed(cmd):.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
