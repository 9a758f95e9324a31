"""What explain --target costs beyond the program's own run and the target's compiles (issue 48: at most 2 s).

    python benchmarks/explain_target_overhead.py [--program examples/programs/train_slogdet.py]
                                                 [--release 0.12.0.1] [--target tpu:v5e:2x2] [--runs 3]

The release's environment with the target's compiler is built first (as explain builds it). Each run is a fresh
process, alternately: (a) the program alone, as ``python PROGRAM`` with the environment's interpreter on 4 forced
host devices and ``JAX_PLATFORMS=cpu`` (what explain runs); (b) the target's compiles alone, as
``python -m repro.target_compile`` over exports that (a') one armed run of the program wrote beforehand; (c)
``python -m kit explain PROGRAM --releases V --target T``. It prints the medians and
``explain - (program + compiles)`` against the 2 s target. The reports explain writes are left in reports/.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from kit.config import load_matrix  # noqa: E402
from kit.install.environment import prepare  # noqa: E402
from kit.install.key import InstallKey  # noqa: E402
from kit.targets import parse_target  # noqa: E402

TARGET_S = 2.0


def _timed(cmd: list[str], env: dict[str, str]) -> float:
    start = time.perf_counter()
    subprocess.run(cmd, cwd=ROOT, env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--program", default="examples/programs/train_slogdet.py")
    parser.add_argument("--release", default="0.12.0.1")
    parser.add_argument("--target", default="tpu:v5e:2x2")
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    target = parse_target(args.target)
    matrix = load_matrix(ROOT / "matrix.toml")
    prepared = prepare(matrix, args.release, InstallKey(target.install_extra), lambda line: None)
    if prepared.environment is None:
        print(f"jax {args.release} with {target.install_extra} is not installable here: {prepared.problem}")
        return 1
    python = str(prepared.environment.python)
    base = {**os.environ, "XLA_FLAGS": f"--xla_force_host_platform_device_count={target.devices}",
            "JAX_PLATFORMS": "cpu", "PYTHONPATH": str(ROOT)}
    with tempfile.TemporaryDirectory() as scratch:
        exports, described = Path(scratch) / "exports", Path(scratch) / "target.json"
        exports.mkdir()
        described.write_text(json.dumps(target.to_json()))
        armed = {**base, "KIT_TARGET_EXPORTS": str(exports), "KIT_TARGET_PLATFORM": target.platform,
                 "PYTHONPATH": f"{ROOT}{os.pathsep}{ROOT / 'repro' / 'target_site'}"}
        _timed([python, args.program], armed)  # the exports the compile runs read
        compile_cmd = [python, "-m", "repro.target_compile", "--exports", str(exports), "--target", str(described),
                       "--dump", str(Path(scratch) / "dump"), "--out", str(Path(scratch) / "out.json")]
        explain = [sys.executable, "-m", "kit", "explain", args.program, "--releases", args.release,
                   "--target", args.target]
        own, compiles, whole = [], [], []
        for _ in range(args.runs):
            own.append(_timed([python, args.program], base))
            compiles.append(_timed(compile_cmd, base))
            whole.append(_timed(explain, dict(os.environ)))
    own_s, compile_s, whole_s = (statistics.median(v) for v in (own, compiles, whole))
    print(f"{args.program} on jax {args.release} for {target.title}, {args.runs} runs each (medians):")
    print(f"  the program alone:    {own_s:.2f} s  ({', '.join(f'{t:.2f}' for t in own)})")
    print(f"  the target compiles:  {compile_s:.2f} s  ({', '.join(f'{t:.2f}' for t in compiles)})")
    print(f"  explain --target:     {whole_s:.2f} s  ({', '.join(f'{t:.2f}' for t in whole)})")
    over = whole_s - own_s - compile_s
    print(f"  beyond both: {over:+.2f} s (target: at most {TARGET_S:.0f} s): {'met' if over <= TARGET_S else 'NOT met'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
