"""How far each release range's commits run on the older release's jaxlib build, and why they stop.

    python benchmarks/commit_eras.py --jax-repo DIR 0.4.20:0.4.21 0.4.35:0.4.36 ... [--out FILE]

For each pair of releases given (OLD:NEW, consecutive releases): the commits between
their tags (`kit.history.commit_range.release_range`), how many of them
``jax/version.py`` says accept the old release's jaxlib, and how many JAX
itself imports and runs one computation with on that build (the commit's
Python laid over the old release's environment, `kit.install.overlay`; the
same question the commit search asks, `kit.run.jax_runs`). The accepted
commits are walked as the search walks them: the far end first, then a
bisection for the last one that runs. Prints a markdown table (docs/commits.md
keeps the one measured) and the seconds each pair took.

Builds each old release's environment as `nox -s <check>-<version>` would
(downloads on a cold machine).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from kit.config import load_matrix  # noqa: E402
from kit.install.key import InstallKey  # noqa: E402
from kit.history.commit_range import release_range  # noqa: E402
from kit.history.commits import headlines  # noqa: E402
from kit.history.source import History  # noqa: E402
from kit.history.version_file import jaxlib_ranges  # noqa: E402
from kit.install import environment  # noqa: E402
from kit.install.overlay import OVERLAY_FORMAT, commit_version, new_overlay_folder, remove_overlay  # noqa: E402
from kit.run.jax_runs import JaxRuns, jax_runs  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jax-repo", type=Path, required=True, help="a full clone of JAX")
    parser.add_argument("--out", type=Path, help="also write the table here")
    parser.add_argument("ranges", nargs="+", help="OLD:NEW release pairs, e.g. 0.6.0:0.6.1")
    args = parser.parse_args(argv)
    matrix = load_matrix(ROOT / "matrix.toml")
    history = History(args.jax_repo.resolve(), "--jax-repo")
    rows = [f"| range | commits | accept the old jaxlib (version.py) | run on it (overlay format {OVERLAY_FORMAT}) | "
            "first that does not run there | "
            "why | seconds |", "|---|---|---|---|---|---|---|"]
    for old, new in (pair.split(":", 1) for pair in args.ranges):
        started = time.monotonic()
        rows.append(_row(matrix, history, old, new) + f" {time.monotonic() - started:.0f} |")
        print(rows[-1], flush=True)
    table = "\n".join(rows)
    print("\n" + table)
    if args.out:
        args.out.write_text(table + "\n", encoding="utf-8")
    return 0


def _row(matrix, history: History, old: str, new: str) -> str:  # type: ignore[no-untyped-def]
    prepared = environment.prepare(matrix, old, InstallKey("cpu"), lambda line: None)
    if prepared.environment is None:
        return f"| {old} → {new} | | | | | jax {old} is not installable here: {prepared.problem} |"
    jaxlib = prepared.environment.pins.get("jaxlib", old)
    commits = list(release_range(history, old, new).candidates)
    ranges = jaxlib_ranges(history, commits)
    accepted = [c for c in commits if ranges.get(c) is not None and ranges[c].accepts(jaxlib)]  # type: ignore[union-attr]
    heads = headlines(history, commits)

    def runs(commit: str) -> JaxRuns:
        folder = new_overlay_folder()
        try:
            version = commit_version(ranges[commit], heads.get(commit, ("", ""))[0], commit)  # type: ignore[arg-type]
            laid = environment.over_release(prepared, history, commit, version, folder)
            return jax_runs(laid.environment)  # type: ignore[arg-type]
        finally:
            remove_overlay(folder)

    last, stop, why = _last_running(accepted, runs)
    title = heads.get(stop, ("", ""))[1][:60] if stop else ""
    return (f"| {old} → {new} (jaxlib {jaxlib}) | {len(commits)} | {len(accepted)} | {last} | "
            f"{stop[:10] + ' ' + repr(title) if stop else '—'} | {why or 'every accepted commit runs'} |")


def _last_running(accepted: list[str], runs) -> tuple[int, str, str]:  # type: ignore[no-untyped-def]
    """(how many of the accepted commits run, the first that does not, what JAX died of there)."""
    if not accepted:
        return 0, "", "no commit accepts it"
    far = runs(accepted[-1])
    if far.ok:
        return len(accepted), "", ""
    good, bad, why = -1, len(accepted) - 1, far.error
    first = runs(accepted[0])
    if not first.ok:
        return 0, accepted[0], first.error
    good = 0
    while bad - good > 1:
        middle = (good + bad) // 2
        seen = runs(accepted[middle])
        if seen.ok:
            good = middle
        else:
            bad, why = middle, seen.error
    return good + 1, accepted[bad], why


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
