"""The release phase of a cold ``--commits`` bisect, this kit beside another checkout of it: issue 28, item 1.

    python benchmarks/release_phase.py --jax-repo DIR [--against DIR] [--samples 2]
                                       [--check scaling] [--good 0.6.0] [--bad 0.4.35]

Each sample runs ``bisect --check scaling --good 0.6.0 --bad 0.4.35 --commits``
from nothing: a scratch environment folder (no release built, no lock, no kept
resolution), a scratch reports folder (no record, an empty probe cache), with
the wheels already in uv's cache and the kit's index pages in one scratch
``KIT_CACHE_DIR`` filled before the first sample. The release phase is the
report's whole time minus its commit phase. The kits take turns (this
checkout, then ``--against``, e.g. a worktree of main at 90d076e), so both
meet the same network and load.

Target (issue 28): this kit's median release phase at most 0.6 times the other's.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TARGET_RATIO = 0.6


def scratch_matrix(kit: Path, folder: Path) -> Path:
    """``kit``'s matrix.toml with its environments and reports in ``folder``."""
    text = (kit / "matrix.toml").read_text(encoding="utf-8")
    text = re.sub(r'(?m)^results_dir = .*$', f'results_dir = "{folder / "reports" / "results"}"', text)
    text = re.sub(r'(?m)^envs_dir = .*$', f'envs_dir = "{folder / "envs"}"', text)
    path = folder / "matrix.toml"
    path.write_text(text, encoding="utf-8")
    return path


def bisect(kit: Path, folder: Path, argv: list[str], cache: Path) -> dict:
    """One bisect with ``kit``'s code in ``folder``; its JSON report, with the wall time beside it."""
    matrix = scratch_matrix(kit, folder)
    code = ("import sys, json; sys.path.insert(0, sys.argv[1]); from kit.cli import main; "
            "sys.exit(main(['bisect', *json.loads(sys.argv[3])], log=lambda m: None, matrix_path=sys.argv[2]))")
    started = time.monotonic()
    proc = subprocess.run([sys.executable, "-c", code, str(kit), str(matrix), json.dumps(argv)], cwd=kit,
                          env={**os.environ, "KIT_CACHE_DIR": str(cache)}, capture_output=True, text=True)
    wall = time.monotonic() - started
    if proc.returncode != 0:
        raise SystemExit(f"{kit}: the bisect failed (exit {proc.returncode}):\n{proc.stderr[-3000:]}")
    report = max((folder / "reports").glob("bisect-*.json"), key=lambda p: p.stat().st_mtime_ns)
    return {**json.loads(report.read_text()), "wall_s": wall}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jax-repo", required=True)
    parser.add_argument("--against", type=Path, default=None)
    parser.add_argument("--samples", type=int, default=2)
    parser.add_argument("--check", default="scaling")
    parser.add_argument("--good", default="0.6.0")
    parser.add_argument("--bad", default="0.4.35")
    args = parser.parse_args()
    argv = ["--check", args.check, "--good", args.good, "--bad", args.bad, "--commits", "--jax-repo", args.jax_repo]
    kits = {"this": ROOT, **({"against": args.against.resolve()} if args.against else {})}
    phase: dict[str, list[float]] = {name: [] for name in kits}
    with tempfile.TemporaryDirectory(prefix="release-phase-") as tmp:
        base, cache = Path(tmp), Path(tmp) / "kit-cache"
        warmup = Path(tempfile.mkdtemp(dir=base))
        bisect(ROOT, warmup, argv, cache)  # the wheels into uv's cache, the index pages into the kit's
        shutil.rmtree(warmup)
        print(f"load average {os.getloadavg()[0]:.1f} at start")
        for sample in range(args.samples):
            for name, kit in kits.items():
                folder = Path(tempfile.mkdtemp(dir=base))
                data = bisect(kit, folder, argv, cache)
                seconds = data["seconds"] - data["commits"]["seconds"]
                phase[name].append(seconds)
                probed = ", ".join(data.get("probed_now") or [])
                print(f"  sample {sample + 1} {name:<7} release phase {seconds:6.1f} s (probed {probed}; "
                      f"commit phase {data['commits']['seconds']:.1f} s; found {data['last_same']} -> "
                      f"{data['first_different']})", flush=True)
                shutil.rmtree(folder)
    for name, figures in phase.items():
        print(f"{name} ({kits[name]}): median release phase {statistics.median(figures):.1f} s over "
              f"{len(figures)} samples ({', '.join(f'{s:.1f}' for s in figures)})")
    if args.against:
        ratio = statistics.median(phase["this"]) / statistics.median(phase["against"])
        print(f"ratio this/against: {ratio:.2f} (target at most {TARGET_RATIO}: "
              f"{'met' if ratio <= TARGET_RATIO else 'MISSED'})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
