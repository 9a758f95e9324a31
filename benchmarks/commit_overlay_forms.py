"""What laying a commit's ``jax/`` alone costs against laying its jaxlib Python too, per commit, in one run.

    python benchmarks/commit_overlay_forms.py [--jax-repo DIR] [--python ENV_PYTHON] [--commits 6] [--rounds 2]

Each commit probe of the commit phase lays the commit over its build, fills
its bytecode from the kit's cache and asks whether JAX itself runs there
(`kit.install.overlay.lay_over`, `kit.install.bytecode.fill_bytecode`,
`kit.run.jax_runs.jax_runs`); the check that follows is the release's own,
the same for both overlays. This times that part for `WITH_JAXLIB` (the
overlay before issue 49, laid first where it runs) and `JAX_ALONE` (laid
where it does not), alternating which goes first, over commits spread through
the range, each stamped as forced onto the build so that JAX's version check
passes. Prints each sample, the medians and their ratio (jax/ alone over
with jaxlib Python: at most 1 is "not slower").

Defaults: the CI bundle of JAX's history (../shared/jax-history, jax-v0.5.2 ..
jax-v0.5.3, cloned into a temporary folder) over the built jax 0.5.3 CPU
environment in .nox/jax-envs.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from kit.history.source import History  # noqa: E402
from kit.install.bytecode import compile_environment, fill_bytecode  # noqa: E402
from kit.install.environment import REUSED, Environment, overlaid  # noqa: E402
from kit.install.overlay import JAX_ALONE, WITH_JAXLIB, lay_over, new_overlay_folder, remove_overlay  # noqa: E402
from kit.run.jax_runs import jax_runs  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jax-repo", type=Path, help="a clone of JAX (default: the CI bundle, cloned)")
    parser.add_argument("--python", type=Path, help="a built environment's interpreter (default: jax 0.5.3's, CPU)")
    parser.add_argument("--build", default="0.5.3", help="the jaxlib version of that environment")
    parser.add_argument("--commits", type=int, default=6)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="kit-bench-forms-") as scratch:
        repo = args.jax_repo or _bundle_clone(Path(scratch) / "jax.git")
        python = args.python or _built_python(args.build)
        history = History(repo.resolve(), "--jax-repo")
        commits = _spread(repo, args.commits)
        bytecode = Path(scratch) / "bytecode"
        print(f"{len(commits)} commits of {repo} over {python} (jaxlib {args.build}), {args.rounds} rounds")
        # As the commit phase does once per build: its packages' bytecode (jaxlib's Python among them, which jax/
        # alone imports from there), so neither overlay compiles the build's files at each import.
        print(f"the build's environment: {compile_environment(python)}", flush=True)
        seconds: dict[str, list[float]] = {WITH_JAXLIB: [], JAX_ALONE: []}
        laying: dict[str, list[float]] = {WITH_JAXLIB: [], JAX_ALONE: []}
        for commit in commits:  # the bytecode cache holds each commit's files once both ways, as after a first probe
            for laid in (WITH_JAXLIB, JAX_ALONE):
                _sample(history, commit, python, args.build, laid, bytecode)
        for round_ in range(args.rounds):
            for index, commit in enumerate(commits):
                order = (WITH_JAXLIB, JAX_ALONE) if (index + round_) % 2 == 0 else (JAX_ALONE, WITH_JAXLIB)
                for laid in order:
                    (took, lay), ok = _sample(history, commit, python, args.build, laid, bytecode)
                    seconds[laid].append(took)
                    laying[laid].append(lay)
                    print(f"  {commit[:10]} {laid:<24} {took:6.2f} s (laying and bytecode {lay:5.2f} s)  "
                          f"{'runs' if ok else 'does not run'}", flush=True)
    for name, samples in (("laid, bytecode and JAX asked", seconds), ("laying and bytecode alone", laying)):
        with_jaxlib, alone = statistics.median(samples[WITH_JAXLIB]), statistics.median(samples[JAX_ALONE])
        print(f"{name}: median with jaxlib Python {with_jaxlib:.2f} s, jax/ alone {alone:.2f} s: "
              f"ratio {alone / with_jaxlib:.2f} (jax/ alone over with jaxlib Python)")
    return 0


def _sample(history: History, commit: str, python: Path, build: str, laid: str,
            bytecode: Path) -> tuple[tuple[float, float], bool]:
    """Lay, fill bytecode, ask JAX: the per-commit part of a commit probe that depends on what is laid;
    ((seconds in all, seconds laying and filling bytecode), whether JAX ran)."""
    started = time.monotonic()
    folder = new_overlay_folder()
    try:
        version = f"{build}.dev20250301+{commit[:10]}.forced"
        lay_over(history, commit, python, folder, version, laid, minimum=build)
        fill_bytecode(python, folder, bytecode)
        laid_at = time.monotonic()
        environment = overlaid(Environment(python, {"jax": build, "jaxlib": build}, REUSED), folder, version)
        runs = jax_runs(environment)
    finally:
        remove_overlay(folder)
    return (time.monotonic() - started, laid_at - started), runs.ok


def _bundle_clone(target: Path) -> Path:
    bundle = next((ROOT.parent / "shared" / "jax-history").glob("*.bundle"))
    subprocess.run(["git", "clone", "--quiet", "--bare", str(bundle), str(target)], check=True)
    return target


def _built_python(build: str) -> Path:
    found = sorted((ROOT / ".nox" / "jax-envs").glob(f"jax-{build}-cpu-*/bin/python"))
    if not found:
        raise SystemExit(f"no built jax {build} CPU environment in .nox/jax-envs: pass --python")
    return found[0]


def _spread(repo: Path, count: int) -> list[str]:
    """``count`` commits spread evenly over the first-parent line of the newest tag."""
    line = subprocess.run(["git", "-C", str(repo), "rev-list", "--first-parent", "--reverse", "--tags", "-n", "2000"],
                          capture_output=True, text=True, check=True).stdout.split()
    step = max(1, len(line) // count)
    return line[step - 1::step][:count]


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
