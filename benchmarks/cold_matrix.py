"""A cold full matrix, this kit beside another checkout of it: figures for issue 28's matrix target.

    python benchmarks/cold_matrix.py --against DIR [--keep] [-- ARGS for nox -s matrix]

Each kit is cloned afresh (``git clone`` of its checkout's HEAD into a scratch
folder: no ``.nox``, no records, no index cache), then ``nox -s matrix --
--rerun`` runs there: every release of its matrix.toml built from scratch and
every cell run. Only uv's cache (downloads and index pages) is shared, warm, as
it is on a user's machine after a first install. ``--against`` runs first, so
this checkout meets a cache at least as warm.

The wall time includes nox making the ``matrix`` session's own environment,
in both. Prints each kit's wall time and cells, and the ratio against the 0.7
target. One sample each (a run takes several minutes); these machines vary,
so read a ratio near the target as a tie.
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TARGET = 0.7


def fresh_clone(checkout: Path, into: Path) -> Path:
    """A clone of ``checkout``'s HEAD (committed work only, as CI and a user would have it)."""
    head = subprocess.run(["git", "-C", str(checkout), "rev-parse", "HEAD"], check=True,
                          capture_output=True, text=True).stdout.strip()
    subprocess.run(["git", "clone", "--quiet", str(checkout), str(into)], check=True)
    subprocess.run(["git", "-C", str(into), "-c", "advice.detachedHead=false", "checkout", "--quiet", "--detach", head], check=True)
    return into


def cold_matrix(clone: Path, args: list[str]) -> tuple[float, int, str]:
    started = time.monotonic()
    proc = subprocess.run(["nox", "-s", "matrix", "--", "--rerun", *args], cwd=clone,
                          capture_output=True, text=True)
    return time.monotonic() - started, proc.returncode, proc.stdout + proc.stderr


def summary(output: str) -> str:
    statuses = re.findall(r"jax \S+: (ran|unsupported|crashed|timed-out|not-installable|unsaved)\b", output)
    statuses += ["error (no record)"] * len(re.findall(r"^nox > ERROR in ", output, re.MULTILINE))
    counts = {status: statuses.count(status) for status in sorted(set(statuses))}
    done = re.search(r"matrix done in (\S+)", output)
    return f"{sum(counts.values())} cells ({', '.join(f'{n} {s}' for s, n in counts.items()) or 'none parsed'})" \
           + (f"; the kit's own clock: {done.group(1)}" if done else "")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--against", type=Path, required=True, help="another checkout (e.g. a worktree at 90d076e)")
    parser.add_argument("--keep", action="store_true", help="keep the scratch clones and print where")
    parser.add_argument("matrix_args", nargs="*", help="after --: more arguments for nox -s matrix")
    args = parser.parse_args()
    scratch = Path(tempfile.mkdtemp(prefix="cold-matrix-"))
    seconds: dict[str, float] = {}
    try:
        for name, checkout in (("against", args.against.resolve()), ("this", ROOT)):
            clone = fresh_clone(checkout, scratch / name)
            print(f"{name}: nox -s matrix -- --rerun {' '.join(args.matrix_args)} in a fresh clone of {checkout} ...",
                  flush=True)
            seconds[name], rc, output = cold_matrix(clone, args.matrix_args)
            print(f"  {seconds[name]:.1f} s, exit {rc}; {summary(output)}", flush=True)
            if rc != 0:
                print("  its last lines:\n    " + "\n    ".join(output.splitlines()[-15:]))
    finally:
        if args.keep:
            print(f"scratch clones kept in {scratch}")
        else:
            shutil.rmtree(scratch, ignore_errors=True)
    ratio = seconds["this"] / seconds["against"]
    print(f"cold full matrix: {seconds['this']:.1f} s against {seconds['against']:.1f} s: "
          f"ratio {ratio:.2f} (target <= {TARGET}: {'met' if ratio <= TARGET else 'NOT met'})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
