"""What explain costs beyond the program itself: the program's own run vs ``python -m kit explain`` of it.

    python benchmarks/explain_overhead.py [--program examples/programs/train_slogdet.py] [--release 0.6.0] [--runs 3]

The release's environment must be built (``nox -s scaling-0.6.0`` builds it).
Each run is a fresh process: the program alone, as ``python PROGRAM`` with the
environment's interpreter and 4 forced host devices (what explain runs), then
``python -m kit explain PROGRAM --releases V``, alternately. It prints both
medians and their difference against the target of issue 34: explain costs the
program's own run plus at most 2 s. The reports the explain runs write are left
in reports/ (the same files a user's run writes).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from kit.config import load_matrix  # noqa: E402
from kit.install.environment import prepare  # noqa: E402
from kit.install.key import InstallKey  # noqa: E402

TARGET_S = 2.0


def _timed(cmd: list[str], env: dict[str, str]) -> float:
    start = time.perf_counter()
    subprocess.run(cmd, cwd=ROOT, env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--program", default="examples/programs/train_slogdet.py")
    parser.add_argument("--release", default="0.6.0")
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    matrix = load_matrix(ROOT / "matrix.toml")
    prepared = prepare(matrix, args.release, InstallKey("cpu"), lambda line: None)
    if prepared.environment is None:
        print(f"jax {args.release} is not built here: {prepared.problem}")
        return 1
    python = str(prepared.environment.python)
    plain_env = {**os.environ, "XLA_FLAGS": "--xla_force_host_platform_device_count=4"}
    explain = [sys.executable, "-m", "kit", "explain", args.program, "--releases", args.release]
    own, whole = [], []
    for _ in range(args.runs):
        own.append(_timed([python, args.program], plain_env))
        whole.append(_timed(explain, dict(os.environ)))
    own_s, whole_s = statistics.median(own), statistics.median(whole)
    print(f"{args.program} on jax {args.release}, {args.runs} runs each (medians):")
    print(f"  the program alone:  {own_s:.2f} s  ({', '.join(f'{t:.2f}' for t in own)})")
    print(f"  kit explain of it:  {whole_s:.2f} s  ({', '.join(f'{t:.2f}' for t in whole)})")
    overhead = whole_s - own_s
    print(f"  overhead: {overhead:.2f} s (target <= {TARGET_S:.0f} s): {'met' if overhead <= TARGET_S else 'MISSED'}")
    return 0 if overhead <= TARGET_S else 1


if __name__ == "__main__":
    sys.exit(main())
