"""A printed line's values over several runs of each release: whether the two sides stay apart.

A line whose values vary between runs of one release (a time-seeded draw) is still a difference between the
releases where the two sides' values never meet: at some number of the line, every value one side printed
lies outside the range of the other side's (the held-out trial's ``acct``: 0.4.33 printed 59 to 62 active
accounts of 64 from run to run, 0.4.34 64 every time). A line that varies on both sides, or whose ranges
overlap, is noise: no run can say which side a value belongs to.
"""

from __future__ import annotations

import math
from typing import Sequence

import kit.triage.block_outcome as block_outcome  # the foundation's reader of outcomes (tests/test_layers.py)

Numbers = list[block_outcome.Number]


def gap(first: Numbers, second: Numbers) -> float:
    """The largest relative difference between two printed sequences (inf: not as many, or finite against not)."""
    if len(first) != len(second):
        return math.inf
    worst = 0.0
    for a, b in zip(first, second):
        if isinstance(a, str) or isinstance(b, str):
            if a != b:
                return math.inf
        elif not block_outcome.same_number(a, b):
            worst = max(worst, abs(a - b) / max(abs(a), abs(b), 1e-30))
    return worst


def steady(runs: Sequence[Numbers]) -> bool:
    """Every run printed the line's numbers alike (within triage's tolerance)."""
    return all(gap(runs[0], other) == 0 for other in runs[1:])


def apart(bad: Sequence[Numbers], good: Sequence[Numbers]) -> bool:
    """The two sides' values never meet: as many numbers on every run of a side, and at some position every
    value of one side outside the range of the other's (a non-finite value against finite ones counts)."""
    counts_bad, counts_good = {len(n) for n in bad}, {len(n) for n in good}
    if len(counts_bad) != 1 or len(counts_good) != 1:
        return False
    if counts_bad != counts_good:
        return True  # each side steady in how many it prints, and the two print a different number of them
    return any(_apart_at([n[at] for n in bad], [n[at] for n in good]) for at in range(counts_bad.pop()))


def _apart_at(bad: list[block_outcome.Number], good: list[block_outcome.Number]) -> bool:
    if any(block_outcome.same_number(a, b) for a in bad for b in good):
        return False
    floats_bad = [a for a in bad if not isinstance(a, str)]
    floats_good = [b for b in good if not isinstance(b, str)]
    if not floats_bad or not floats_good:
        # Non-finite on one side only, or on both with no value in common (nan against inf).
        return len(floats_bad) in (0, len(bad)) and len(floats_good) in (0, len(good))
    if len(floats_bad) != len(bad) or len(floats_good) != len(good):
        return False  # finite and not on one side: its spread is too wide to say
    return max(floats_bad) < min(floats_good) or max(floats_good) < min(floats_bad)


def nearest(bad: Sequence[Numbers], good: Sequence[Numbers]) -> float:
    """The smallest relative difference between a run of one side and a run of the other."""
    return min(gap(a, b) for a in bad for b in good)
