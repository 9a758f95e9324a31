"""Measured metrics: summaries of samples, and whether one release's samples are a step from another's.

Pure functions, no I/O, the standard library only: the nox process has no
scipy (requirements.txt keeps the driver small), and the one test we need,
Mann-Whitney U, is fifty lines. Medians and quartiles are the ``statistics``
module's (quartiles by its "inclusive" method, as the repro computes them). ``tests/test_metrics.py`` checks it against
scipy.stats.mannwhitneyu in the test environment.

The decision rule, asv-style (``asv compare``: a ratio *and* a statistical
test, never one timing):

* the bounds set the scene: the good release's samples are the baseline, and
  whichever way the bad release's median moved is *worse*. Bounds that do not
  differ by at least ``factor`` (or that a rank test cannot tell apart) mean
  there is no step to find: :class:`NoStep`.
* a probe is **bad** when its median is worse than the good median by at least
  ``factor`` and the rank test says its samples differ from the good ones;
* it is **good** when it is worse by less than ``factor`` and the rank test
  tells it apart from the bad samples (it is on the good side of the step);
* anything else is **undecided** (within noise): the caller measures more
  samples and asks again, and counts a probe that stays undecided as skipped.
"""

from __future__ import annotations

import enum
import math
import statistics
from dataclasses import dataclass
from functools import lru_cache
from typing import Sequence

DEFAULT_FACTOR = 1.5
DEFAULT_ALPHA = 0.01
# Exact U distribution up to this many sample pairs; the normal approximation beyond.
EXACT_MAX_PAIRS = 400


# --------------------------------------------------------------------------
# Summaries


def median(samples: Sequence[float]) -> float:
    if not samples:
        raise ValueError("no samples")
    return statistics.median(samples)


def quartiles(samples: Sequence[float]) -> tuple[float, float]:
    """(Q1, Q3) by linear interpolation between order statistics (numpy's default, the repro's method)."""
    if not samples:
        raise ValueError("no samples")
    if len(samples) == 1:  # statistics.quantiles wants two points before Python 3.13
        return samples[0], samples[0]
    q1, _, q3 = statistics.quantiles(samples, n=4, method="inclusive")
    return q1, q3


def spread_pct(median: float, q1: float, q3: float) -> float:
    """The interquartile range as a percentage of the median (0 when the median is 0)."""
    return 100.0 * (q3 - q1) / abs(median) if median else 0.0


@dataclass(frozen=True)
class Summary:
    """Median and spread of one release's samples, for the matrix."""

    median: float
    q1: float
    q3: float
    n: int

    @property
    def spread_pct(self) -> float:
        return spread_pct(self.median, self.q1, self.q3)


def summarise(samples: Sequence[float]) -> Summary:
    return Summary(median(samples), *quartiles(samples), len(samples))


def worse_by(reference: float, value: float, worse: str) -> float:
    """How many times worse ``value`` is than ``reference`` (below 1: better); ``worse`` is higher|lower."""
    if reference <= 0 or value <= 0:
        raise ValueError("metric medians must be positive to compare as ratios")
    return value / reference if worse == "higher" else reference / value


# --------------------------------------------------------------------------
# Mann-Whitney U


def mann_whitney_p(x: Sequence[float], y: Sequence[float]) -> float:
    """Two-sided p-value that x and y come from the same distribution.

    Exact when there are no ties and few pairs, else the normal approximation
    with tie correction and continuity correction; both as scipy computes them.
    """
    n1, n2 = len(x), len(y)
    if n1 == 0 or n2 == 0:
        raise ValueError("both samples need at least one value")
    ranks = _midranks([*x, *y])
    u1 = sum(ranks[:n1]) - n1 * (n1 + 1) / 2
    u = max(u1, n1 * n2 - u1)
    tied = len(set([*x, *y])) < n1 + n2
    if not tied and n1 * n2 <= EXACT_MAX_PAIRS:
        return min(1.0, 2 * _exact_sf(int(round(u)), n1, n2))
    return _normal_p(u, n1, n2, ranks)


def _midranks(values: Sequence[float]) -> list[float]:
    order = sorted(range(len(values)), key=lambda i: values[i])
    ranks = [0.0] * len(values)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        for k in range(i, j + 1):
            ranks[order[k]] = (i + j) / 2 + 1
        i = j + 1
    return ranks


def _exact_sf(u: int, n1: int, n2: int) -> float:
    """P(U >= u) under the null, from the exact distribution of U."""
    counts = _u_counts(min(n1, n2), max(n1, n2))
    return sum(counts[u:]) / sum(counts)


@lru_cache(maxsize=64)
def _u_counts(m: int, n: int) -> tuple[int, ...]:
    """How many arrangements give U = 0 .. m*n (coefficients of the Gaussian binomial)."""
    # f(m, n) = f(m-1, n) shifted by n  +  f(m, n-1), built row by row.
    table: list[list[tuple[int, ...]]] = [[(1,) for _ in range(n + 1)]]
    for i in range(1, m + 1):
        row: list[tuple[int, ...]] = [(1,)]
        for j in range(1, n + 1):
            a, b = table[i - 1][j], row[j - 1]
            size = i * j + 1
            out = [0] * size
            for k, c in enumerate(a):
                out[k + j] += c
            for k, c in enumerate(b):
                out[k] += c
            row.append(tuple(out))
        table.append(row)
    return table[m][n]


def _normal_p(u: float, n1: int, n2: int, ranks: Sequence[float]) -> float:
    n = n1 + n2
    ties: dict[float, int] = {}
    for r in ranks:
        ties[r] = ties.get(r, 0) + 1
    tie_term = sum(t ** 3 - t for t in ties.values()) / (n * (n - 1)) if n > 1 else 0.0
    variance = n1 * n2 / 12 * ((n + 1) - tie_term)
    if variance <= 0:
        return 1.0
    z = (u - n1 * n2 / 2 - 0.5) / math.sqrt(variance)
    return min(1.0, math.erfc(z / math.sqrt(2)))


# --------------------------------------------------------------------------
# The decision


class NoStep(Exception):
    """The bounds do not differ by the factor (or not beyond noise): nothing to bisect."""


class Call(enum.Enum):
    GOOD = "good"
    BAD = "bad"
    UNDECIDED = "undecided"


@dataclass(frozen=True)
class Baseline:
    """The bounds' samples: what good looks like, and which way is worse."""

    good: tuple[float, ...]
    bad: tuple[float, ...]
    worse: str
    factor: float = DEFAULT_FACTOR
    alpha: float = DEFAULT_ALPHA

    @property
    def step(self) -> float:
        return worse_by(median(self.good), median(self.bad), self.worse)


@dataclass(frozen=True)
class Decision:
    call: Call
    ratio: float
    """How many times worse than the good median the probe's median is."""
    p_good: float
    p_bad: float
    reason: str


def baseline(good: Sequence[float], bad: Sequence[float], factor: float = DEFAULT_FACTOR,
             alpha: float = DEFAULT_ALPHA, unit: str = "") -> Baseline:
    """The baseline from the bounds' samples; NoStep when they do not differ by ``factor``."""
    if factor <= 1:
        raise ValueError("the factor must be above 1")
    worse = "higher" if median(bad) > median(good) else "lower"
    ratio = worse_by(median(good), median(bad), worse)
    medians = f"good median {median(good):.4g}{unit}, bad median {median(bad):.4g}{unit}"
    if ratio < factor:
        raise NoStep(f"no step: the bounds differ by {ratio:.2f}x ({medians}), less than the factor {factor:g}")
    p = mann_whitney_p(good, bad)
    if p >= alpha:
        raise NoStep(f"no step: the bounds differ by {ratio:.2f}x ({medians}) but a rank test cannot tell "
                     f"their {len(good)} and {len(bad)} samples apart (p = {p:.3g} >= {alpha:g}); "
                     "more samples per run would help")
    return Baseline(tuple(good), tuple(bad), worse, factor, alpha)


def baseline_from_rounds(good_runs: Sequence[Sequence[float]], bad_runs: Sequence[Sequence[float]],
                         factor: float = DEFAULT_FACTOR, alpha: float = DEFAULT_ALPHA, unit: str = "") -> Baseline:
    """The baseline from runs of the bounds taken in turns (good, bad, good, bad, ...).

    Samples from one run share that moment's machine load, so a rank test on
    them alone is overconfident: on a shared machine one run can be 2x slower
    than the next. The step must therefore show in every round, not only in
    the pooled samples; otherwise it is load, not the release: NoStep.
    """
    base = baseline([x for run in good_runs for x in run], [x for run in bad_runs for x in run], factor, alpha, unit)
    ratios = [worse_by(median(g), median(b), base.worse) for g, b in zip(good_runs, bad_runs)]
    if min(ratios) < factor:
        shown = ", ".join(f"{r:.2f}x" for r in ratios)
        raise NoStep(f"no step: pooled, the bounds differ by {base.step:.2f}x, but not in every round of runs "
                     f"taken in turns ({shown}): the difference moves with the machine's load, not the release")
    return base


def decide_runs(base: Baseline, runs: Sequence[Sequence[float]],
                good_runs: Sequence[Sequence[float]] | None = None) -> Decision:
    """The pooled decision, kept when the runs' own medians are on the same side of the factor.

    Two runs must both agree with it; with three or more, one may disagree.

    With ``good_runs`` (the good bound run again right before each probe
    run), each probe run is compared with its own good run and the pooled
    test uses those fresh good samples: load that comes and goes over minutes
    then moves both sides of each ratio alike (asv compares the same way).
    """
    goods = list(good_runs) if good_runs else [list(base.good)] * len(runs)
    local = Baseline(tuple(x for run in goods for x in run), base.bad, base.worse, base.factor, base.alpha)
    pooled = decide(local, [x for run in runs for x in run])
    if pooled.call is Call.UNDECIDED:
        return pooled
    ratios = [worse_by(median(g), median(run), base.worse) for g, run in zip(goods, runs)]
    # Two runs must agree; from three on, one run may be the odd one out (a burst of load).
    disagree = sum((r >= base.factor) != (pooled.call is Call.BAD) for r in ratios)
    if disagree <= max(0, len(ratios) - 2):
        return pooled
    shown = ", ".join(f"{r:.2f}x" for r in ratios)
    return Decision(Call.UNDECIDED, pooled.ratio, pooled.p_good, pooled.p_bad,
                    f"within noise: the runs disagree ({shown} the good median)")


def decide(base: Baseline, probe: Sequence[float]) -> Decision:
    """Is this probe on the bad side of the step, the good side, or within noise?"""
    ratio = worse_by(median(base.good), median(probe), base.worse)
    p_good = mann_whitney_p(base.good, probe)
    p_bad = mann_whitney_p(base.bad, probe)
    better_than_bad = worse_by(median(probe), median(base.bad), base.worse) > 1
    figures = f"{ratio:.2f}x the good median (p = {p_good:.2g} vs good, {p_bad:.2g} vs bad, n = {len(probe)})"
    if ratio >= base.factor and p_good < base.alpha:
        return Decision(Call.BAD, ratio, p_good, p_bad, f"bad: {figures}")
    if ratio < base.factor and better_than_bad and p_bad < base.alpha:
        return Decision(Call.GOOD, ratio, p_good, p_bad, f"good: {figures}")
    return Decision(Call.UNDECIDED, ratio, p_good, p_bad, f"within noise: {figures}")


def steps(series: Sequence[tuple[str, Sequence[float]]], factor: float = DEFAULT_FACTOR,
          alpha: float = DEFAULT_ALPHA) -> list[tuple[str, str, float, float]]:
    """Every step between neighbours (in the given order) of at least ``factor`` that a rank test confirms.

    Returns (before, after, after's median / before's median, p) per step, either direction.
    """
    found = []
    for (before, a), (after, b) in zip(series, series[1:]):
        ratio = median(b) / median(a)
        if max(ratio, 1 / ratio) >= factor:
            p = mann_whitney_p(a, b)
            if p < alpha:
                found.append((before, after, ratio, p))
    return found
