"""What each overlay form makes a commit do, not only whether it runs: the evidence for the order of LAID_FORMS.

    python benchmarks/commit_overlay_outcomes.py --jax-repo DIR [--python ENV_PYTHON] [--build 0.5.1]
                                                 [--script examples/sharded_slogdet_lu.py] [COMMIT ...]

Lays each commit over one built environment twice, with its jaxlib Python
(`WITH_JAXLIB`) and with `jax/` alone (`JAX_ALONE`), runs the script in it
and prints the exit code and the script's last line. Defaults: f93c2a1aa5 and
its parent over the jax 0.5.2 CPU environment (jaxlib 0.5.1), judged by the
sharded slogdet example: the fix is partly `jaxlib/lapack.py`, so only the
overlay with the jaxlib Python shows it (docs/commits.md, "A deliberate
deviation from issue 49's order").
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from kit.history.source import History  # noqa: E402
from kit.install.overlay import JAX_ALONE, WITH_JAXLIB, lay_over, new_overlay_folder, remove_overlay  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("commits", nargs="*", help="commits to lay (default: f93c2a1aa5^ and f93c2a1aa5)")
    parser.add_argument("--jax-repo", type=Path, required=True, help="a clone of JAX holding the commits")
    parser.add_argument("--python", type=Path, help="a built environment's interpreter (default: jax 0.5.2's, CPU)")
    parser.add_argument("--build", default="0.5.1", help="the jaxlib version of that environment")
    parser.add_argument("--script", type=Path, default=ROOT / "examples" / "sharded_slogdet_lu.py")
    args = parser.parse_args(argv)
    python = args.python or _built_python("0.5.2")
    history = History(args.jax_repo.resolve(), "--jax-repo")
    commits = [_full(args.jax_repo, c) for c in (args.commits or ["f93c2a1aa5^", "f93c2a1aa5"])]
    print(f"{args.script.name} over {python} (jaxlib {args.build})")
    for commit in commits:
        for laid in (WITH_JAXLIB, JAX_ALONE):
            code, last, seconds = _outcome(history, commit, python, args.build, laid, args.script)
            print(f"  {commit[:10]} {laid:<24} exit {code}  {last[:110]}  ({seconds:.1f} s)", flush=True)
    return 0


def _outcome(history: History, commit: str, python: Path, build: str, laid: str,
             script: Path) -> tuple[int, str, float]:
    """The script's exit code and last line with ``commit`` laid over ``python`` as ``laid`` says."""
    folder = new_overlay_folder()
    started = time.monotonic()
    try:
        lay_over(history, commit, python, folder, f"{build}.dev0+{commit[:10]}", laid, minimum=build)
        ran = subprocess.run([str(python), str(script)], env={**os.environ, "PYTHONPATH": str(folder)},
                             capture_output=True, text=True)
    finally:
        remove_overlay(folder)
    lines = (ran.stdout + ran.stderr).strip().splitlines()
    return ran.returncode, lines[-1] if lines else "", time.monotonic() - started


def _full(repo: Path, commit: str) -> str:
    return subprocess.run(["git", "-C", str(repo), "rev-parse", f"{commit}^{{commit}}"], capture_output=True,
                          text=True, check=True).stdout.strip()


def _built_python(release: str) -> Path:
    found = sorted((ROOT / ".nox" / "jax-envs").glob(f"jax-{release}-cpu-*/bin/python"))
    if not found:
        raise SystemExit(f"no built jax {release} CPU environment in .nox/jax-envs: pass --python")
    return found[0]


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
