"""The bisection algorithm, with no I/O: find where an outcome changes.

Modelled on cargo-bisect-rustc's ``least_satisfying``. The caller hands in an
ordered list of candidates (JAX versions, oldest first) and a *probe*: a
callable that says, for one candidate, whether the bug shows
(``ProbeOutcome.BAD``), does not (``ProbeOutcome.GOOD``), or could not be tested
(``ProbeOutcome.SKIP``: not installable, crashed, inconclusive). Everything that
installs and runs lives in the rest of ``kit.bisect``; keeping this module free of I/O is
what lets the tests drive it with plain lists and a property test.

Both directions are one search. A user hunting a regression has a good oldest
end; a user hunting a fix has a bad oldest end. Either way we look for the
*first candidate whose outcome differs from the oldest end's*, so the
direction is just ``old_outcome``.

Typical use by the driver::

    cache = load_previous_probes()          # resume: finished probes are free
    problem = verify_bounds(versions, probe, cache, old_outcome=ProbeOutcome.GOOD)
    if problem:
        raise SomeUserError(problem.message)
    log(f"about {expected_probes(len(versions))} probes")
    result = bisect(versions, probe, old_outcome=ProbeOutcome.GOOD, cache=cache)
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Callable, Dict, Generic, Hashable, List, Mapping, Optional, Sequence, TypeVar

__all__ = [
    "ProbeOutcome",
    "BisectResult",
    "BoundsProblem",
    "Transition",
    "bisect",
    "bisect_taking_old_end",
    "expected_probes",
    "ksect",
    "likely_probes",
    "non_monotonic",
    "probe_round",
    "scan_all",
    "section_points",
    "verify_bounds",
]

T = TypeVar("T", bound=Hashable)


class ProbeOutcome(enum.Enum):
    """What one probe of one candidate found."""

    GOOD = "good"
    """The bug does not show."""
    BAD = "bad"
    """The bug shows."""
    SKIP = "skip"
    """No answer: the candidate could not be installed or its run was inconclusive."""


Probe = Callable[[T], ProbeOutcome]
"""Tests one candidate. May be slow (installs a JAX release), so it is cached."""

ProbeMany = Callable[[Sequence[T]], Mapping[T, ProbeOutcome]]
"""Tests several candidates at once (SLURM jobs side by side, or local processes); an outcome for each."""


@dataclass
class BisectResult(Generic[T]):
    """Where the outcome changes, as narrowly as the probes allow.

    The change lies in ``ambiguous + [first_different]``: when ``ambiguous``
    is empty it is exactly ``first_different``; otherwise the skipped
    candidates between the two known ends could each hold it.
    """

    last_same: T
    """Newest candidate known to have the oldest end's outcome."""
    first_different: T
    """Oldest candidate known to have the other outcome, after ``last_same``."""
    ambiguous: List[T]
    """Skipped candidates strictly between the two; empty when the answer is exact."""
    probes: List[T]
    """Candidates probed by this call, in order (cache hits are not listed)."""
    cache: Dict[T, ProbeOutcome]
    """Every outcome known, including those passed in: save it to resume later."""
    old_outcome: ProbeOutcome = ProbeOutcome.GOOD
    """ProbeOutcome of the oldest end: GOOD for a regression hunt, BAD for a fix hunt."""
    rounds: List[List[T]] = field(default_factory=list)
    """:func:`ksect`: the candidates probed together, round by round (one each in :func:`bisect`)."""

    @property
    def exact(self) -> bool:
        """True when no skipped candidate blurs the answer."""
        return not self.ambiguous

@dataclass(frozen=True)
class Transition(Generic[T]):
    """One change of outcome between two neighbouring tested candidates."""

    before: T
    """Last tested candidate with the old outcome."""
    after: T
    """First tested candidate with the new outcome."""
    outcome_before: ProbeOutcome
    outcome_after: ProbeOutcome
    skipped_between: List[T] = field(default_factory=list)
    """Untestable candidates between the two; any of them could hold the change."""


def _probe_cached(candidate: T, probe: Probe[T], cache: Dict[T, ProbeOutcome], probes: List[T]) -> ProbeOutcome:
    """Probe once per candidate, ever: installs are minutes long."""
    if candidate not in cache:
        outcome = probe(candidate)
        if not isinstance(outcome, ProbeOutcome):
            raise TypeError(f"probe({candidate!r}) returned {outcome!r}, not a ProbeOutcome")
        cache[candidate] = outcome
        probes.append(candidate)
    return cache[candidate]


def _other(outcome: ProbeOutcome) -> ProbeOutcome:
    if outcome is ProbeOutcome.SKIP:
        raise ValueError("old_outcome must be ProbeOutcome.GOOD or ProbeOutcome.BAD, not SKIP")
    return ProbeOutcome.BAD if outcome is ProbeOutcome.GOOD else ProbeOutcome.GOOD


def expected_probes(k: int) -> int:
    """About how many probes a full bisect of ``k`` candidates runs, for the log line.

    ``ceil(log2 k) + 2``: the two end checks of :func:`verify_bounds` plus the
    halvings of :func:`bisect` (which needs at most ``ceil(log2(k - 1))``, never
    more than ``ceil(log2 k)``). It is an upper bound when nothing is skipped;
    each skipped candidate costs about one probe more. Never more than ``k``.
    """
    if k <= 0:
        return 0
    ceil_log2 = (k - 1).bit_length()  # == ceil(log2 k) for k >= 1
    return min(k, ceil_log2 + 2)


@dataclass(frozen=True)
class BoundsProblem(Generic[T]):
    """Why bisecting these ends would mislead: what one end (or both) showed instead."""

    kind: str
    """``too-few``, ``reversed`` (both ends the other way round), ``untestable`` or ``unchanged``."""
    end: Optional[T]
    """The end at fault (the oldest when both are), None for ``too-few``."""
    got: Optional[ProbeOutcome]
    wanted: Optional[ProbeOutcome]
    message: str
    """One sentence in the search's words (oldest / newest); drivers may say it in theirs."""


def verify_bounds(
    candidates: Sequence[T],
    probe: Probe[T],
    cache: Optional[Dict[T, ProbeOutcome]] = None,
    *,
    old_outcome: ProbeOutcome = ProbeOutcome.GOOD,
) -> Optional[BoundsProblem[T]]:
    """Probe both ends and say why bisecting would mislead; None when the range is fine.

    :func:`bisect` trusts that the oldest candidate has ``old_outcome`` and the
    newest the other one; this checks it first (the probes land in ``cache``,
    so bisect will not repeat them). Both ends are probed before judging, so
    reversed ends are told apart from one wrong end.
    """
    new_outcome = _other(old_outcome)
    if len(candidates) < 2:
        return BoundsProblem("too-few", None, None, None,
                             f"need at least two versions to bisect, got {len(candidates)}: widen the range")
    cache = {} if cache is None else cache
    first, last = candidates[0], candidates[-1]
    got_first = _probe_cached(first, probe, cache, [])
    got_last = _probe_cached(last, probe, cache, [])
    if got_first is ProbeOutcome.SKIP:
        return BoundsProblem("untestable", first, got_first, old_outcome,
                             f"the oldest version {first} could not be tested (skip): choose another start")
    if got_last is ProbeOutcome.SKIP:
        return BoundsProblem("untestable", last, got_last, new_outcome,
                             f"the newest version {last} could not be tested (skip): choose another end")
    if got_first is not old_outcome and got_last is not new_outcome:
        return BoundsProblem(
            "reversed", first, got_first, old_outcome,
            f"the oldest version {first} is {got_first.value} and the newest {last} is "
            f"{got_last.value}, the reverse of what was asked: swap the direction "
            f"(look for a {'fix' if old_outcome is ProbeOutcome.GOOD else 'regression'})",
        )
    if got_first is not old_outcome:
        return BoundsProblem("unchanged", first, got_first, old_outcome,
                             f"the oldest version {first} is already {got_first.value}, like the newest "
                             f"{last}: start from an older version")
    if got_last is not new_outcome:
        return BoundsProblem("unchanged", last, got_last, new_outcome,
                             f"the newest version {last} is still {got_last.value}, like the oldest "
                             f"{first}: end at a newer version")
    return None


def _tighten(candidates: Sequence[T], cache: Dict[T, ProbeOutcome], old: ProbeOutcome, lo: int, hi: int) -> tuple[int, int]:
    """Narrow [lo, hi] with outcomes already cached (a resumed bisect)."""
    for i in range(lo + 1, hi):
        if cache.get(candidates[i]) is not None and cache[candidates[i]] not in (old, ProbeOutcome.SKIP):
            hi = i
            break
    for i in range(hi - 1, lo, -1):
        if cache.get(candidates[i]) is old:
            lo = i
            break
    return lo, hi


def _known_ends(candidates: Sequence[T], cache: Optional[Dict[T, ProbeOutcome]], old_outcome: ProbeOutcome,
                search: str) -> Dict[T, ProbeOutcome]:
    """The search's cache, after checking that the ends are as the search takes them (the oldest ``old_outcome``)."""
    if len(candidates) < 2:
        raise ValueError(f"need at least two candidates to bisect, got {len(candidates)}")
    if len(set(candidates)) != len(candidates):
        raise ValueError("candidates must be distinct")
    cache = {} if cache is None else cache
    for end, expected in ((candidates[0], old_outcome), (candidates[-1], _other(old_outcome))):
        if end in cache and cache[end] is not expected:
            raise ValueError(f"{end} is known to be {cache[end].value}, but {search} needs it {expected.value}; "
                             "run verify_bounds first")
    return cache


def bisect(
    candidates: Sequence[T],
    probe: Probe[T],
    *,
    old_outcome: ProbeOutcome = ProbeOutcome.GOOD,
    cache: Optional[Dict[T, ProbeOutcome]] = None,
) -> BisectResult[T]:
    """Find the first candidate whose outcome differs from the oldest one's.

    The ends are taken as known: ``candidates[0]`` has ``old_outcome`` and
    ``candidates[-1]`` the other (check with :func:`verify_bounds`; neither is
    probed here). Every probe goes through ``cache``, which may arrive
    pre-filled from an earlier run. When the midpoint is skipped, its nearest
    untested neighbour is tried instead; when only skipped candidates remain
    between the last same and the first different, they are returned as
    ``ambiguous``. Assumes one change (monotonic outcomes); use
    :func:`scan_all` when that is in doubt.
    """
    new_outcome = _other(old_outcome)
    cache = _known_ends(candidates, cache, old_outcome, "bisect")
    probes: List[T] = []
    lo, hi = _tighten(candidates, cache, old_outcome, 0, len(candidates) - 1)
    while hi - lo > 1:
        untested = [i for i in range(lo + 1, hi) if cache.get(candidates[i]) is not ProbeOutcome.SKIP]
        if not untested:
            break  # only skipped candidates are left between the ends: ambiguous
        mid = (lo + hi) // 2
        # Nearest to the midpoint; on a tie the lower one, as the true midpoint rounds down.
        index = min(untested, key=lambda i: (abs(i - mid), i))
        outcome = _probe_cached(candidates[index], probe, cache, probes)
        if outcome is old_outcome:
            lo = index
        elif outcome is new_outcome:
            hi = index
        # SKIP: now known; the next round picks a neighbour.
    return BisectResult(
        last_same=candidates[lo],
        first_different=candidates[hi],
        ambiguous=list(candidates[lo + 1 : hi]),
        probes=probes,
        cache=cache,
        old_outcome=old_outcome,
        rounds=[[candidate] for candidate in probes],
    )


def bisect_taking_old_end(
    candidates: Sequence[T],
    probe: Probe[T],
    cache: Dict[T, ProbeOutcome],
    *,
    old_outcome: ProbeOutcome = ProbeOutcome.GOOD,
    before: Callable[[], None] = lambda: None,
) -> tuple[Optional[BoundsProblem[T]], Optional[BisectResult[T]], bool]:
    """:func:`verify_bounds` then :func:`bisect`, probing the oldest end only if the answer rests on it.

    For an oldest end that is expensive and expected to have ``old_outcome``
    (the commit a bad release was cut from): it is taken to have it. The
    answer stands without it whenever the last candidate with the old outcome
    is one the search probed, since a probed pair of neighbours is a change
    whatever the oldest end does. When the answer lands on the oldest end,
    or the newest end is wrong, the oldest end is probed and judged as
    :func:`verify_bounds` does. ``before`` runs between the two (a probe that
    steers the search). Returns the problem, the result, and whether the
    oldest end went unprobed (it is then left out of ``cache``).
    """
    if len(candidates) < 2:
        return verify_bounds(candidates, probe, cache, old_outcome=old_outcome), None, False
    first = candidates[0]
    taken = first not in cache
    if taken:
        cache[first] = old_outcome
    problem = verify_bounds(candidates, probe, cache, old_outcome=old_outcome)
    result = None
    if problem is None:
        before()
        result = bisect(candidates, probe, old_outcome=old_outcome, cache=cache)
    if taken:
        del cache[first]
        if problem is not None or (result is not None and result.last_same == first):
            taken = False  # the answer rests on the oldest end: probe it, and judge the ends for real
            problem = verify_bounds(candidates, probe, cache, old_outcome=old_outcome)
            result = result if problem is None else None
    return problem, result, taken


def section_points(lo: int, hi: int, k: int, skipped: Optional[set[int]] = None) -> List[int]:
    """Up to ``k`` indices strictly between ``lo`` and ``hi`` that cut it into ``k + 1`` near-equal parts.

    Each aims at ``lo + j * (hi - lo) // (k + 1)`` and takes the nearest index
    not skipped and not taken (on a tie the lower one), so skipped candidates
    are stepped around as :func:`bisect` does; fewer than ``k`` when fewer are left.
    """
    free = [i for i in range(lo + 1, hi) if i not in (skipped or set())]
    chosen: List[int] = []
    for j in range(1, k + 1):
        target = lo + (j * (hi - lo)) // (k + 1)
        left = [i for i in free if i not in chosen]
        if not left:
            break
        chosen.append(min(left, key=lambda i: (abs(i - target), i)))
    return sorted(chosen)


def probe_round(batch: Sequence[T], probe_many: ProbeMany[T], cache: Dict[T, ProbeOutcome], probes: List[T]) -> List[T]:
    """Probe, in one call, every candidate of ``batch`` not known yet; return those probed."""
    todo = [candidate for candidate in dict.fromkeys(batch) if candidate not in cache]
    if not todo:
        return []
    got = probe_many(todo)
    for candidate in todo:
        outcome = got.get(candidate)
        if not isinstance(outcome, ProbeOutcome):
            raise TypeError(f"probe_many gave {outcome!r} for {candidate!r}, not a ProbeOutcome")
        cache[candidate] = outcome
        probes.append(candidate)
    return todo


def ksect(
    candidates: Sequence[T],
    probe_many: ProbeMany[T],
    k: int,
    *,
    old_outcome: ProbeOutcome = ProbeOutcome.GOOD,
    cache: Optional[Dict[T, ProbeOutcome]] = None,
) -> BisectResult[T]:
    """:func:`bisect` with ``k`` probes per round, run together: (k+1)-section.

    Each round probes the ``k`` candidates that cut the range left into
    ``k + 1`` near-equal parts (:func:`section_points`), then keeps the part
    where the outcome changes, so a search needs about ``log_{k+1}(n)``
    rounds where bisection needs ``log2(n)`` (more probes in all, fewer
    waits: worth it when probes run side by side, as SLURM jobs). The ends are
    taken as known, as in :func:`bisect`; skipped candidates are stepped
    around, and those left between the last same and the first different
    are ``ambiguous``. ``k = 1`` picks the same candidates as :func:`bisect`.
    """
    if k < 1:
        raise ValueError(f"k must be at least 1, got {k}")
    _other(old_outcome)  # refuses SKIP as the old end's outcome
    cache = _known_ends(candidates, cache, old_outcome, "ksect")
    probes: List[T] = []
    rounds: List[List[T]] = []
    lo, hi = _tighten(candidates, cache, old_outcome, 0, len(candidates) - 1)
    while hi - lo > 1:
        skipped = {i for i in range(lo + 1, hi) if cache.get(candidates[i]) is ProbeOutcome.SKIP}
        points = section_points(lo, hi, k, skipped)
        if not points:
            break  # only skipped candidates are left between the ends: ambiguous
        rounds.append(probe_round([candidates[i] for i in points], probe_many, cache, probes))
        lo, hi = _tighten(candidates, cache, old_outcome, lo, hi)
    return BisectResult(candidates[lo], candidates[hi], list(candidates[lo + 1 : hi]), probes, cache, old_outcome,
                        rounds)


def scan_all(
    candidates: Sequence[T],
    probe: Probe[T],
    cache: Optional[Dict[T, ProbeOutcome]] = None,
) -> List[Transition[T]]:
    """Probe every candidate and list every change of outcome, oldest first.

    The ``--all`` mode: slower than :func:`bisect` but it does not assume a
    single change, so it shows a bug that came, went and came back. Skipped
    candidates are stepped over and reported inside the transition they blur.
    More than one transition means the outcomes are not monotonic (see
    :func:`non_monotonic`) and a bisect over this range would be misleading.
    """
    cache = {} if cache is None else cache
    probes: List[T] = []
    transitions: List[Transition[T]] = []
    previous: Optional[T] = None
    skipped: List[T] = []
    for candidate in candidates:
        outcome = _probe_cached(candidate, probe, cache, probes)
        if outcome is ProbeOutcome.SKIP:
            if previous is not None:
                skipped.append(candidate)
            continue
        if previous is not None and cache[previous] is not outcome:
            transitions.append(Transition(previous, candidate, cache[previous], outcome, skipped))
        previous, skipped = candidate, []
    return transitions


def non_monotonic(transitions: Sequence[Transition[T]]) -> bool:
    """True when the outcome changes more than once: bisect cannot be trusted there."""
    return len(transitions) > 1


def likely_probes(candidates: Sequence[T]) -> List[T]:
    """Every candidate, in the order a bisection is likely to need it: the two ends, then each round's midpoints.

    The midpoint of the whole range, then those of its halves, of their
    halves, and so on (breadth first, as :func:`bisect` rounds down): round
    ``r`` of any search probes one of the ``2**r`` candidates listed in its
    row. For work done ahead of the probes (resolving the install of what the
    next rounds may need); no outcome is known here.
    """
    if len(candidates) <= 2:
        return list(candidates)
    order = [0, len(candidates) - 1]
    spans = [(0, len(candidates) - 1)]
    while spans:
        lo, hi = spans.pop(0)
        if hi - lo < 2:
            continue
        mid = (lo + hi) // 2
        order.append(mid)
        spans += [(lo, mid), (mid, hi)]
    return [candidates[i] for i in order]
