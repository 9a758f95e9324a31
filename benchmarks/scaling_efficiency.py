"""How an affected and a fixed release scale (speedup over one device), and a warm session's wall time.

    python benchmarks/scaling_efficiency.py [--affected 0.4.35] [--fixed 0.6.0] [-- extra session args]

Runs ``nox -s scaling-<v>`` for both releases back to back in one run (so the
two sets of timings share the machine's conditions), then prints from their
records slogdet's speedup over one device at 2 and 4 devices with the
control's beside it (jit forward), the structural figures, and the session's
wall time. Run it once first to build the environments: the second run is the
warm figure (the script says which it was).

On CPU the "devices" are host threads sharing the same cores, so speedups
there are a hint, not a measurement of GPU scaling; the HLO figures are exact.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "reports" / "results"


def newest_record(version: str, since: float) -> dict | None:
    paths = sorted(RESULTS.glob(f"scaling-{version}-*.json"), key=lambda p: p.stat().st_mtime)
    fresh = [p for p in paths if p.stat().st_mtime >= since]
    return json.loads(fresh[-1].read_text()) if fresh else None


def run_session(version: str, extra: list[str]) -> tuple[float, dict | None]:
    started_wall = time.time()
    started = time.perf_counter()
    cmd = ["nox", "-s", f"scaling-{version}"] + (["--", *extra] if extra else [])
    proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    elapsed = time.perf_counter() - started
    if proc.returncode != 0:
        print(proc.stdout[-2000:] + proc.stderr[-2000:], file=sys.stderr)
    return elapsed, newest_record(version, started_wall)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--affected", default="0.4.35")
    parser.add_argument("--fixed", default="0.6.0")
    parser.add_argument("extra", nargs="*", help="passed to the sessions after --")
    args = parser.parse_args()

    print(f"{'release':>9} {'verdict':>12} {'det x2':>6} {'det x4':>6} {'ctl x4':>6} {'LU/dev':>7} {'global':>7} "
          f"{'all-gathers':>11} {'env':>7} {'wall s':>7}")
    for version in (args.affected, args.fixed):
        seconds, record = run_session(version, args.extra)
        if record is None:
            print(f"{version:>9} no record written (see the session output above)")
            continue
        s = record.get("evidence", {}).get("summary", {})
        warm = "warm" if record.get("install", {}).get("env_reused") else "cold"
        print(f"{version:>9} {str(record.get('verdict')):>12} {_f(s.get('slogdet_speedup_2')):>6} "
              f"{_f(s.get('slogdet_speedup_4')):>6} {_f(s.get('control_speedup_4')):>6} "
              f"{str(s.get('lu_batch_per_device')):>7} "
              f"{str(s.get('global_batch')):>7} {str(s.get('all_gathers')):>11} {warm:>7} {seconds:>7.1f}")
    print("det xN, ctl xN: slogdet's and the control's speedup over one device at N devices (N is ideal).")
    return 0


def _f(value: object) -> str:
    return f"{value:.2f}" if isinstance(value, float) else "-"


if __name__ == "__main__":
    sys.exit(main())
