"""The commit phase of ``--commits``, timed from an empty probe cache: figures for issue 15.

    python benchmarks/commit_bisect_timing.py --jax-repo DIR [--check scaling] [--good 0.6.0] [--bad 0.4.35]
        [--against OTHER_CHECKOUT] [--warm-compiles]

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

The compile cache (`kit/run/compile_cache.py`) starts empty too, unless
``--warm-compiles``: a first bisect pays for its compiles, and what is timed
is what one bisect reuses from its own earlier probes.

``--against DIR`` first runs this script as another checkout has it (a
worktree of an earlier commit: ``git worktree add ../base 90d076e``), then
this one, and prints the ratio of their commit phases against issue 28's
target (at most 0.5x), and whether both named the same commit.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import os
import re
import shutil
import subprocess
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
RATIO_TARGET = 0.5
PHASE = re.compile(r"^commit phase: (\d+) s")
COMMIT = re.compile(r"^commit: \S+: (\S+)")
FIGURE = re.compile(r"^(releases|commit|commit probes run|commit phase|identical rerun): |^  [0-9a-f]{10} jaxlib ")


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
    parser.add_argument("--against", type=Path, help="another checkout whose commit phase to compare with")
    parser.add_argument("--warm-compiles", action="store_true", help="keep the compile cache of earlier runs")
    args = parser.parse_args()
    if args.against is not None:
        return compare(args, args.against.resolve())
    matrix = load_matrix(ROOT / "matrix.toml")
    compile_cache = matrix.envs_dir.parent / "compile-cache"
    if not args.warm_compiles and compile_cache.exists():
        shutil.rmtree(compile_cache)  # a cache: what it held is compiled again
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


def compare(args: argparse.Namespace, other: Path) -> int:
    """The other checkout's run of its own copy of this benchmark, then this one's: their commit phases' ratio."""
    flags = ["--jax-repo", args.jax_repo, "--check", args.check, "--good", args.good, "--bad", args.bad]
    found: dict[Path, tuple[int, str]] = {}
    for root in (other, ROOT):
        mine = ["--warm-compiles"] if root == ROOT and args.warm_compiles else []
        done = subprocess.run([sys.executable, str(root / "benchmarks" / "commit_bisect_timing.py"), *flags, *mine],
                              cwd=root, capture_output=True, text=True, check=True)
        lines = done.stdout.splitlines()
        print(f"== {root.name}")  # its figures; the probes' own output, echoed as they ran, is left out
        print("\n".join(line for line in lines if FIGURE.match(line)))
        phase = next(int(m.group(1)) for line in lines for m in [PHASE.match(line)] if m)
        commit = next(m.group(1) for line in lines for m in [COMMIT.match(line)] if m)
        found[root] = (phase, commit)
    ratio = found[ROOT][0] / max(found[other][0], 1)
    same = found[ROOT][1] == found[other][1]
    print(f"commit phase {found[ROOT][0]} s here, {found[other][0]} s in {other.name}: ratio {ratio:.2f} "
          f"(target <= {RATIO_TARGET}: {'met' if ratio <= RATIO_TARGET else 'MISSED'}); "
          f"the same commit: {'yes' if same else 'NO'} ({found[ROOT][1][:10]})")
    return 0 if ratio <= RATIO_TARGET and same else 1


if __name__ == "__main__":
    raise SystemExit(main())
