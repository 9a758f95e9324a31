"""Cold release probe overhead, this kit beside another checkout of it: figures for issue 28, item 1.

    python benchmarks/cold_probe.py [--against DIR] [--releases 0.6.0,0.5.3] [--samples 3]

A probe of a trivial script (``import jax``) in an environment not yet built,
with the wheels already in uv's cache, minus the same probe warm (its
environment and lock there): what resolving and building costs a probe that
must build. Each sample makes a scratch environment folder (the shared
``.nox/jax-envs`` is never touched), runs the cold probe and then the warm
one, for each kit in turn (this checkout, then ``--against``, e.g. a worktree
of main at 90d076e), so both meet the same network and the same load.

A kit keeps no state between samples but what it keeps outside the
environment folder: uv's cache (downloads and pages) and the kit's index
cache (``KIT_CACHE_DIR``, one scratch folder for both kits, filled before the
first sample), which is what a user's second bisect has too. Resolutions the
kit keeps for reuse live in the environment folder, so each sample starts
without them: every cold figure includes a resolution.

Target (issue 28): the median overhead at most 3 s (10-19 s before).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TARGET_S = 3.0

_MATRIX = """\
[kit]
results_dir = "results"
envs_dir = "envs"

[install]
pythons = ["3.13", "3.12", "3.11", "3.10"]

{releases}
[checks.trivial]
script = "trivial.py"
timeout_s = 300
"""

_TRIVIAL = "import jax\nprint(jax.__version__)\n"


def probe(kit: Path, folder: Path, version: str, cache: Path) -> float:
    """One ``python -m kit run trivial VERSION`` in ``folder``'s matrix, by ``kit``'s code; its wall seconds."""
    code = ("import sys; sys.path.insert(0, sys.argv[1]); from kit.cli import main; "
            "sys.exit(main(['run', 'trivial', sys.argv[2]], matrix_path=sys.argv[3]))")
    env = {**os.environ, "KIT_CACHE_DIR": str(cache)}
    started = time.monotonic()
    proc = subprocess.run([sys.executable, "-c", code, str(kit), version, str(folder / "matrix.toml")], cwd=kit,
                          env=env, capture_output=True, text=True)
    seconds = time.monotonic() - started
    if proc.returncode != 0:
        raise SystemExit(f"{kit}: the probe of jax {version} failed (exit {proc.returncode}):\n{proc.stderr[-3000:]}")
    return seconds


def scratch(base: Path, releases: list[str]) -> Path:
    folder = Path(tempfile.mkdtemp(prefix="cold-probe-", dir=base))
    blocks = "".join(f'[[release]]\nversion = "{version}"\n\n' for version in releases)
    (folder / "matrix.toml").write_text(_MATRIX.format(releases=blocks))
    (folder / "trivial.py").write_text(_TRIVIAL)
    return folder


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--against", type=Path, default=None, help="another checkout of the kit, timed alongside")
    parser.add_argument("--releases", default="0.6.0,0.5.3")
    parser.add_argument("--samples", type=int, default=3, help="cold/warm pairs per release and kit")
    args = parser.parse_args()
    releases = args.releases.split(",")
    kits = {"this": ROOT, **({"against": args.against.resolve()} if args.against else {})}
    overhead: dict[str, list[float]] = {name: [] for name in kits}
    with tempfile.TemporaryDirectory(prefix="cold-probe-") as tmp:
        base, cache = Path(tmp), Path(tmp) / "kit-cache"
        warmup = scratch(base, releases)
        for version in releases:  # uv's cache holds the wheels, the kit's cache the index pages: "downloads cached"
            probe(ROOT, warmup, version, cache)
        shutil.rmtree(warmup)
        print(f"load average {os.getloadavg()[0]:.1f} at start; {len(releases)} releases x {args.samples} samples")
        for sample in range(args.samples):
            for version in releases:
                for name, kit in kits.items():
                    folder = scratch(base, releases)
                    cold = probe(kit, folder, version, cache)
                    warm = probe(kit, folder, version, cache)
                    overhead[name].append(cold - warm)
                    print(f"  sample {sample + 1} jax {version:<6} {name:<7} cold {cold:6.2f} s  warm {warm:5.2f} s  "
                          f"overhead {cold - warm:6.2f} s", flush=True)
                    shutil.rmtree(folder)
    for name, figures in overhead.items():
        median = statistics.median(figures)
        verdict = "met" if median <= TARGET_S else "MISSED"
        print(f"{name} ({kits[name]}): median overhead {median:.2f} s over {len(figures)} probes "
              f"(min {min(figures):.2f}, max {max(figures):.2f}); target {TARGET_S:.0f} s: {verdict}")
    if args.against:
        ratio = statistics.median(overhead["this"]) / statistics.median(overhead["against"])
        print(f"ratio this/against: {ratio:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
