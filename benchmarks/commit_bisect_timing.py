"""The commit phase of ``--commits``, timed from an empty probe cache: figures for issue 15.

    python benchmarks/commit_bisect_timing.py --jax-repo DIR [--check scaling] [--good 0.6.0] [--bad 0.4.35]

The release phase is answered as usual (current records, built environments),
so what is timed is the commit phase: it runs against a copy of
``reports/results`` whose probe cache is empty, so every commit probe runs.
It prints the release result, the commit named, each commit probe with its
jaxlib build and seconds, the commit phase's wall time against the target,
the environments built in the commit phase (target: none), and then the same
bisect again (target: runs nothing).

Target (issue 15, on this 2-core machine): the commit phase of the scaling
bisect 0.4.35 -> 0.6.0 within 3 minutes, in at most ceil(log2 480) + 3 commit
probes. The machine may be shared: run it when it is quiet, or read the
figures as upper bounds.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from kit.bisect import driver  # noqa: E402
from kit.config import load_matrix  # noqa: E402

TARGET_S = 180.0


def bisect(matrix: Any, argv: list[str]) -> tuple[dict[str, Any], float]:
    started = time.monotonic()
    assert driver.main(matrix, argv, lambda line: None) == 0
    path = max(matrix.results_dir.parent.glob("bisect-*.json"), key=lambda p: p.stat().st_mtime_ns)
    return json.loads(path.read_text()), time.monotonic() - started


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jax-repo", required=True)
    parser.add_argument("--check", default="scaling")
    parser.add_argument("--good", default="0.6.0")
    parser.add_argument("--bad", default="0.4.35")
    args = parser.parse_args()
    matrix = load_matrix(ROOT / "matrix.toml")
    with tempfile.TemporaryDirectory(prefix="commit-timing-") as tmp:
        results = Path(tmp) / "reports" / "results"
        shutil.copytree(matrix.results_dir, results)  # the records answer the releases; the cache starts empty
        matrix = dataclasses.replace(matrix, results_dir=results)
        argv = ["--check", args.check, "--good", args.good, "--bad", args.bad, "--commits", "--jax-repo", args.jax_repo]
        load = os.getloadavg()[0]
        data, seconds = bisect(matrix, argv)
        commits = data["commits"]
        ran = [p for p in commits["probes"] if p["key"] in commits["probed_now"]]
        bound = math.ceil(math.log2(max(commits["range"]["commits"], 2))) + 3
        print(f"releases: last {data['last_same']}, first {data['first_different']}; load average {load:.1f} at start")
        first = commits.get("first_different") or {}
        print(f"commit: {commits['verdict']}: {first.get('hash', '-')} {first.get('title', '')}")
        for probe in commits["probes"]:
            print(f"  {probe['commit'][:10]} jaxlib {probe['jaxlib']:<7} {probe['outcome'] or '-':<5} "
                  f"{probe['source']:<8} {probe['seconds']:6.1f} s  {probe['title'][:60]}")
        built = [p for p in ran if p["environment"] == "built"]
        print(f"commit probes run: {len(ran)} (bound {bound}); environments built for them: {len(built)}")
        print(f"commit phase: {commits['seconds']:.0f} s (target {TARGET_S:.0f} s: "
              f"{'met' if commits['seconds'] <= TARGET_S else 'MISSED'}); whole bisect {seconds:.0f} s")
        again, rerun_s = bisect(matrix, argv)
        print(f"identical rerun: {len(again['probed_now'])} release and {len(again['commits']['probed_now'])} "
              f"commit probes run, {rerun_s:.1f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
