"""Advice that follows the evidence: when what is known already shows the outcome changing twice, say so.

A bound that does not test as given usually means the bound is wrong, and
"move --bad away from --good" is the right tip. But when the records or the
probe cache already show the outcome changing twice inside the bounds (good,
then bad, then good again: a bug that came and went), moving a bound only
hides that range. Then the tip names the changes seen and gives the ``--all``
command, which probes every release and reports every change. Pure: it reads
outcomes, nothing else.
"""

from __future__ import annotations

from typing import Mapping, Sequence

from packaging.version import Version

from ...reproduce_line import shell_join
from ..search import ProbeOutcome


def changes_seen(outcomes: Mapping[str, ProbeOutcome], lo: str, hi: str) -> list[tuple[str, ProbeOutcome]]:
    """The known outcomes from ``lo`` to ``hi`` (inclusive), oldest first, where each differs from the one
    before it (skips left out): ``[(lo, good), (v, bad), (w, good)]`` means two changes."""
    inside = sorted(((v, o) for v, o in outcomes.items() if o is not ProbeOutcome.SKIP
                     and Version(lo) <= Version(v) <= Version(hi)), key=lambda item: Version(item[0]))
    runs: list[tuple[str, ProbeOutcome]] = []
    for version, outcome in inside:
        if not runs or runs[-1][1] is not outcome:
            runs.append((version, outcome))
    return runs


def scan_tip(outcomes: Mapping[str, ProbeOutcome], good: str, bad: str, argv: Sequence[str]) -> str | None:
    """The tip when the known outcomes change at least twice between the bounds; None otherwise (``argv``: the
    command line as reports quote it)."""
    lo, hi = sorted((good, bad), key=Version)
    runs = changes_seen(outcomes, lo, hi)
    if len(runs) < 3:
        return None
    shown = " → ".join(f"jax {v} {o.value}" for v, o in runs)
    return (f"the records and probes already show the outcome changing {len(runs) - 1} times inside the bounds "
            f"({shown}): no bound placement makes one bisect of this range right; list every change with "
            f"`nox -s bisect -- {shell_join(scan_argv(argv))}`")


def scan_argv(quoted_argv: Sequence[str]) -> Sequence[str]:
    """The command line with --all, and without what --all does not go with (--commits, --jax-repo)."""
    argv: list[str] = []
    skip = False
    for arg in quoted_argv:
        if skip:
            skip = False
            continue
        if arg == "--commits" or arg.startswith("--jax-repo="):
            continue
        if arg == "--jax-repo":
            skip = True
            continue
        argv.append(arg)
    return [*argv, "--all"] if "--all" not in argv else argv
