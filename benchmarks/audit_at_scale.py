"""An audit of every entry of the catalogue on one installation: hand-written and harvested (issue 59).

    python benchmarks/audit_at_scale.py [--release 0.11.0] [--repeats 3] [--jax-repo PATH]

Runs ``jax-kit audit RELEASE --harvested`` (the hand entries' checks from one
warm interpreter, each in a fresh fork of it; the confirmed harvested entries'
tests in one pytest process per core, compiles reused from the last audit
where that cannot change an answer) once to build or
reuse the release's two environments and fill the compile cache (timed and
printed as the warm-up: an audit's first run here), then ``--repeats`` times,
timing each whole command from outside (wall, and the CPU it and its
children used: what the load does not stretch), and reading the two parts'
own seconds from its lines (``N checks in X s``, ``N harvested entries in X s``).

Target (issue 59): every entry on one installation in at most 60 s on this
2-core machine. A binary harvested entry has no test that tells its parent
from its fix on CPU, so no audit can run it: the figure says how many. The
machine may be shared (other agents, a harvest at nice 19): the load average
is printed with each run; read the figures as upper bounds when it is high.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TARGET_S = 60.0


def _audit(release: str, jax_repo: str) -> tuple[float, float, str, int]:
    """Wall seconds, CPU seconds of the command and every process it waited for, its output, its exit code."""
    command = [sys.executable, "-m", "kit", "audit", release, "--harvested", "--jax-repo", jax_repo]
    cpu_before = _children_cpu()
    started = time.monotonic()
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, stdin=subprocess.DEVNULL)
    return time.monotonic() - started, _children_cpu() - cpu_before, done.stdout + done.stderr, done.returncode


def _children_cpu() -> float:
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def _part(pattern: str, text: str) -> tuple[int, float]:
    found = re.search(pattern, text)
    return (int(found.group(1)), float(found.group(2))) if found else (0, float("nan"))


def _entries() -> tuple[int, int, int]:
    listed = json.loads(subprocess.run([sys.executable, "-m", "kit", "known", "--json"], cwd=ROOT,
                                       capture_output=True, text=True, check=True).stdout)
    harvested = [e for e in listed if e.get("harvested")]
    confirmed = sum(1 for e in harvested if e.get("status") == "confirmed")
    return len(listed) - len(harvested), confirmed, len(harvested) - confirmed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--release", default="0.11.0")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--jax-repo", default=os.environ.get("JAX_REPO", "../jax"))
    parser.add_argument("--no-warm-up", action="store_true", help="the environments are built: time every run")
    args = parser.parse_args()
    hand, confirmed, binary = _entries()
    print(f"catalogue: {hand} hand entries, {confirmed} confirmed harvested, {binary} binary harvested "
          f"(no test tells them apart on CPU: not runnable by an audit)")
    if not args.no_warm_up:
        seconds, _cpu, text, code = _audit(args.release, args.jax_repo)
        print(f"warm-up (environments built or reused): {seconds:.1f} s, exit {code}")
        if code not in (0, 1):
            print(text[-3000:])
            return 2
    walls, cpus = [], []
    for number in range(1, args.repeats + 1):
        load = os.getloadavg()[0]
        seconds, cpu, text, code = _audit(args.release, args.jax_repo)
        cpus.append(cpu)
        checks, hand_s = _part(r"(\d+) checks in ([\d.]+) s", text)
        entries, harvested_s = _part(r"(\d+) harvested entries in ([\d.]+) s", text)
        walls.append(seconds)
        print(f"run {number}: {seconds:.1f} s wall, {cpu:.1f} s CPU (exit {code}; load {load:.1f}): {checks} hand checks in "
              f"{hand_s:.1f} s, {entries} harvested entries in {harvested_s:.1f} s")
    median = statistics.median(walls)
    print(f"audit of every runnable entry on jax {args.release}: median {median:.1f} s of {len(walls)} runs, "
          f"{median / TARGET_S:.2f} of the {TARGET_S:.0f} s target; CPU median {statistics.median(cpus):.1f} s "
          f"(on 2 free cores the wall can be no less than half of it: {statistics.median(cpus) / 2 / TARGET_S:.2f} "
          "of the target)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
