"""Wall time of a warm ``nox -s matrix`` and of ``nox -s report``, in one run.

    python benchmarks/matrix_timing.py [-- ARGS for nox -s matrix, e.g. --only 0.4.16,0.6.2]

Warm means every cell already has a current record, so the matrix only plans
installs (uv metadata, from its cache where it can), skips every cell and
rewrites the report. The script says when that was not so (cells ran, so the
figure measures runs, not the warm path). Targets from issue 4: warm matrix
within 2 minutes on a 2-core machine, report within 5 s.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "reports" / "results"
MATRIX_TARGET_S = 120.0
REPORT_TARGET_S = 5.0


def timed(cmd: list[str]) -> tuple[float, int, str]:
    """Run from the repository root; return (seconds, exit code, combined output)."""
    started = time.perf_counter()
    proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    return time.perf_counter() - started, proc.returncode, proc.stdout + proc.stderr


def record_count() -> int:
    return sum(1 for _ in RESULTS.rglob("*.json")) if RESULTS.is_dir() else 0


def verdict(seconds: float, target: float) -> str:
    return "within target" if seconds <= target else "OVER target"


def main(argv: list[str]) -> int:
    matrix_args = argv[1:] if argv[:1] == ["--"] else argv
    before = record_count()
    report_env_existed = (ROOT / ".nox" / "report").is_dir()

    matrix_s, matrix_rc, matrix_out = timed(["nox", "-s", "matrix", "--", *matrix_args])
    ran = record_count() - before
    report_s, report_rc, report_out = timed(["nox", "-s", "report"])

    current = re.search(r"(\d+) of (\d+) cells are current", matrix_out)
    print(f"machine: {os.cpu_count()} CPU cores")
    print(f"nox -s matrix {' '.join(matrix_args)}".rstrip()
          + f": {matrix_s:.1f} s (exit {matrix_rc}; target {MATRIX_TARGET_S:.0f} s on 2 cores, "
          f"{verdict(matrix_s, MATRIX_TARGET_S)})")
    print(f"  cells current: {current.group(1)} of {current.group(2)}" if current else "  cells current: unknown")
    if ran:
        print(f"  NOT WARM: {ran} cells ran and wrote records; run again for the warm figure")
    print(f"nox -s report: {report_s:.1f} s (exit {report_rc}; target {REPORT_TARGET_S:.0f} s, "
          f"{verdict(report_s, REPORT_TARGET_S)})"
          + ("" if report_env_existed else "; includes creating its nox environment (first run)"))
    for name, rc, out in (("matrix", matrix_rc, matrix_out), ("report", report_rc, report_out)):
        if rc != 0:
            print(f"--- nox -s {name} failed; its last lines:\n" + "\n".join(out.splitlines()[-15:]))
    return 0 if matrix_rc == 0 and report_rc == 0 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
