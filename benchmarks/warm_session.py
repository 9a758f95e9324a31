"""How soon a warm check session reaches its repro, and how long the whole session takes.

    python benchmarks/warm_session.py [--runs N] [--session scaling-0.6.0] [--offline] [--against DIR]

Warm means the release's environment is built and locked: the session should
go from matrix.toml to the repro without the index or uv. Each run is a real
``nox -s <session>`` in a fresh process; the script timestamps nox's own
"Running session" line and the kit's "running -m repro..." line as they come.
``--offline`` cuts the network (proxy to a closed port) to show the warm path
needs none. Targets from issue 10: the repro starts < 1 s after the session
starts, and the median session takes at most 10 s on a 2-core machine.

The first run builds the environment if it is missing (and fills the
compile cache, `kit/run/compile_cache.py`); it is reported and left out of
the figures. Records the runs write are removed afterwards.

``--against DIR`` runs the same session in another checkout (a worktree of an
earlier commit: ``git worktree add ../base 90d076e``, with its ``.nox`` linked
to this one's) alternately with this one, and prints the ratio of the medians
against issue 28's target: this checkout's warm session at most 0.6x the other's.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "reports" / "results"
START_TARGET_S = 1.0
SESSION_TARGET_S = 10.0
RATIO_TARGET = 0.6
CUT = {"HTTPS_PROXY": "http://127.0.0.1:9", "https_proxy": "http://127.0.0.1:9",
       "HTTP_PROXY": "http://127.0.0.1:9", "http_proxy": "http://127.0.0.1:9"}


def one_session(session: str, offline: bool, root: Path = ROOT) -> dict[str, float | bool | None]:
    """Wall time, and seconds from launch / from nox's session start to the repro's start."""
    env = {**os.environ, **(CUT if offline else {})}
    launched = time.perf_counter()
    proc = subprocess.Popen(["nox", "-s", session], cwd=root, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)
    session_at = repro_at = None
    built = False
    assert proc.stdout is not None
    for line in proc.stdout:
        now = time.perf_counter() - launched
        if session_at is None and "Running session" in line:
            session_at = now
        if repro_at is None and "running -m repro." in line:
            repro_at = now
        built = built or "creating environment" in line
    code = proc.wait()
    wall = time.perf_counter() - launched
    if code != 0:
        raise SystemExit(f"nox -s {session} exited {code}")
    return {"wall": wall, "launch_to_repro": repro_at,
            "session_to_repro": None if repro_at is None or session_at is None else repro_at - session_at,
            "built": built}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--session", default="scaling-0.6.0")
    parser.add_argument("--offline", action="store_true", help="cut the network for the timed runs")
    parser.add_argument("--against", type=Path, help="another checkout whose warm session to compare with")
    args = parser.parse_args()
    if args.against is not None:
        return compare(args.session, args.runs, args.against.resolve())
    with records_removed(ROOT):
        first = one_session(args.session, offline=False)
        if first["built"]:
            print(f"first run built the environment ({first['wall']:.1f} s); not counted")
        runs = [one_session(args.session, args.offline) for _ in range(args.runs)]
    walls = [float(r["wall"]) for r in runs]
    starts = [float(r["session_to_repro"]) for r in runs if r["session_to_repro"] is not None]
    launches = [float(r["launch_to_repro"]) for r in runs if r["launch_to_repro"] is not None]
    where = "network cut" if args.offline else "network up"
    print(f"warm nox -s {args.session}, {len(runs)} runs ({where}; machine shared, timings noisy)")
    print(f"  session start -> repro start: median {statistics.median(starts):.2f} s "
          f"(max {max(starts):.2f} s; target < {START_TARGET_S:.0f} s)")
    print(f"  nox launch -> repro start:    median {statistics.median(launches):.2f} s")
    print(f"  whole session wall time:      median {statistics.median(walls):.1f} s "
          f"(min {min(walls):.1f}, max {max(walls):.1f}; target <= {SESSION_TARGET_S:.0f} s, was 15.5 s)")
    ok = statistics.median(starts) < START_TARGET_S and statistics.median(walls) <= SESSION_TARGET_S
    print("  within target" if ok else "  OVER target")
    return 0 if ok else 1


@contextmanager
def records_removed(*roots: Path) -> Iterator[None]:
    """Remove the records the sessions write: the benchmark measures sessions, its records are not results."""
    before = {root: set((root / "reports" / "results").glob("*.json")) for root in roots}
    try:
        yield
    finally:
        for root, kept in before.items():
            for path in set((root / "reports" / "results").glob("*.json")) - kept:
                path.unlink()


def compare(session: str, runs: int, other: Path) -> int:
    """This checkout's warm session against ``other``'s, run alternately (each warmed once first)."""
    walls: dict[Path, list[float]] = {ROOT: [], other: []}
    with records_removed(ROOT, other):
        for root in walls:
            one_session(session, offline=False, root=root)  # builds or warms what a warm session has
        for _ in range(runs):
            for root in walls:
                walls[root].append(float(one_session(session, offline=False, root=root)["wall"]))
    here, there = statistics.median(walls[ROOT]), statistics.median(walls[other])
    print(f"warm nox -s {session}, {runs} runs each, alternating (machine shared, timings noisy)")
    for root, label in ((other, "against"), (ROOT, "this")):
        print(f"  {label:<8} {root.name:<24} median {statistics.median(walls[root]):.1f} s  "
              f"({', '.join(f'{w:.1f}' for w in walls[root])})")
    ratio = here / there
    print(f"  ratio {ratio:.2f} (target <= {RATIO_TARGET}): {'met' if ratio <= RATIO_TARGET else 'MISSED'}")
    return 0 if ratio <= RATIO_TARGET else 1


if __name__ == "__main__":
    sys.exit(main())
