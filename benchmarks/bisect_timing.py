"""Cold script bisect 0.4.20 → 0.6.0 from a fresh clone, then reruns: figures for issue 10.

    python benchmarks/bisect_timing.py [--keep]

1. Clones this repository's committed HEAD into a temporary folder: no JAX
   environments, no probe cache, no index metadata cache. uv's own download
   cache is shared with the machine (the figure says how big it was: warm
   means wheels are hard-linked, not downloaded).
2. ``nox -s bisect -- --script examples/sharded_slogdet_lu.py --good 0.6.0
   --bad 0.4.20`` (24 candidates: 23 releases and the yanked 0.4.32), timing
   when the candidate list is printed and the whole bisect, and counting
   installs and probes.
3. The same script with other bounds (``--good 0.6.0 --bad 0.4.25``): how many
   releases run again (target: none; the new bound 0.4.25 itself must be
   probed unless the first bisect happened to), and its cost line.
4. The first bisect again: its cost line ("ran nothing and built nothing").

Targets (issue 10, on this 2-core machine): candidate list within 10 s, whole
cold bisect within 5 minutes, rerun with other bounds runs no release again.
The machine may be shared: run it when it is quiet, or read the figures as
upper bounds.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = "examples/sharded_slogdet_lu.py"
LIST_TARGET_S = 10.0
BISECT_TARGET_S = 300.0


@dataclass
class Run:
    argv: list[str]
    seconds: float = 0.0
    list_seconds: float | None = None
    code: int = 0
    lines: list[str] = field(default_factory=list)

    def count(self, pattern: str) -> int:
        return sum(1 for line in self.lines if re.search(pattern, line))

    def first(self, pattern: str) -> str:
        return next((line for line in self.lines if re.search(pattern, line)), "")

    @property
    def probes_run(self) -> list[str]:
        return [m.group(1) for line in self.lines if (m := re.search(r"probe jax (\S+): .*\[run\]", line))]


def bisect(clone: Path, *args: str) -> Run:
    """Run ``nox -s bisect -- ARGS`` in the clone, noting when the candidate list appears."""
    run = Run(["nox", "-s", "bisect", "--", "--script", SCRIPT, *args])
    env = {k: v for k, v in os.environ.items() if k != "KIT_CACHE_DIR"}  # the clone's own, empty, cache
    started = time.perf_counter()
    proc = subprocess.Popen(run.argv, cwd=clone, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True, bufsize=1)
    assert proc.stdout is not None
    for line in proc.stdout:
        if run.list_seconds is None and re.search(r"^\d+ candidate releases", line):
            run.list_seconds = time.perf_counter() - started
        run.lines.append(line.rstrip())
    run.code = proc.wait()
    run.seconds = time.perf_counter() - started
    return run


def uv_cache_size() -> str:
    try:
        folder = subprocess.run(["uv", "cache", "dir"], capture_output=True, text=True, check=True).stdout.strip()
        size = subprocess.run(["du", "-sm", folder], capture_output=True, text=True).stdout.split()[0]
        return f"{size} MiB at {folder}"
    except (OSError, subprocess.CalledProcessError, IndexError):
        return "unknown"


def verdict(ok: bool) -> str:
    return "within target" if ok else "OVER target"


def main(argv: list[str]) -> int:
    keep = "--keep" in argv
    workdir = Path(tempfile.mkdtemp(prefix="kit-bisect-bench-"))
    clone = workdir / "clone"
    subprocess.run(["git", "clone", "--quiet", str(ROOT), str(clone)], check=True)
    head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=clone, capture_output=True, text=True).stdout
    print(f"fresh clone of {ROOT} at {head.strip()} in {clone}: no environments, no probe cache, no metadata cache")
    print(f"uv cache (shared, not cleared): {uv_cache_size()}; machine: {os.cpu_count()} CPU cores, maybe shared")
    try:
        cold = bisect(clone, "--good", "0.6.0", "--bad", "0.4.20")
        other = bisect(clone, "--good", "0.6.0", "--bad", "0.4.25")
        again = bisect(clone, "--good", "0.6.0", "--bad", "0.4.20")
    finally:
        if not keep:
            shutil.rmtree(workdir, ignore_errors=True)
    for name, run in (("cold bisect", cold), ("other bounds", other), ("same bisect again", again)):
        if run.code != 0:
            print(f"{name} FAILED (exit {run.code}):\n" + "\n".join(run.lines[-30:]))
            return 1
    listed = cold.list_seconds if cold.list_seconds is not None else float("nan")
    print(f"\ncold: {' '.join(cold.argv)}")
    print("  " + cold.first(r"^\d+ candidate releases"))
    print(f"  candidate list printed after {listed:.1f} s (target {LIST_TARGET_S:.0f} s, "
          f"{verdict(listed <= LIST_TARGET_S)})")
    print(f"  whole bisect: {cold.seconds:.1f} s (target {BISECT_TARGET_S:.0f} s, "
          f"{verdict(cold.seconds <= BISECT_TARGET_S)})")
    print(f"  installs (environments created): {cold.count(r'creating environment')}; "
          f"probes run: {len(cold.probes_run)} ({', '.join(cold.probes_run)})")
    print(f"  answer: {cold.first(r'last bad release')} / {cold.first(r'first good release')}")
    for name, run in (("rerun, other bounds", other), ("rerun, same bounds", again)):
        repeated = [v for v in run.probes_run if v in cold.probes_run]
        new = [v for v in run.probes_run if v not in cold.probes_run]
        print(f"\n{name}: {' '.join(run.argv)}")
        print(f"  {run.seconds:.1f} s; candidate list after {run.list_seconds or float('nan'):.1f} s; "
              f"releases run again: {len(repeated)} {repeated or ''}; releases never run before: {len(new)} "
              f"{new or ''}; environments created: {run.count(r'creating environment')}")
        print(f"  answer: {run.first(r'last bad release')} / {run.first(r'first good release')}")
        print(f"  cost line: {run.first(r'^This run ')}")
        earlier = run.first(r'^Earlier runs answered')
        if earlier:
            print(f"             {earlier}")
    repeated = [v for v in other.probes_run + again.probes_run if v in cold.probes_run]
    return 0 if not repeated and not again.probes_run else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
