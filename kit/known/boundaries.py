"""Where a known problem's range begins and ends, found by release bisection (pure: no I/O).

A range has two boundaries: *introduced in* (the first release holding the problem after one without it) and
*fixed in* (the first release without it after the newest holding it: the safe release ``audit`` recommends).
Each is found by the kit's own release bisect (`kit.bisect.search.bisect`) over the ordered list of every
release, not by a few chosen ones, so a boundary is two neighbouring releases, or two releases with only
*unknown* ones between them (a release that does not install here, a check that cannot tell there): those are
the boundary's uncertainty, named with it.

The search is stepped, not driven: `search_range` says which releases the two bisects want next, given every
outcome known so far, and the caller measures them and asks again. So the releases many entries want are
measured together, one installation and one interpreter per release (`kit.known.bisection`), and a search is
resumed from what was kept. It runs `bisect` itself each time, with a probe that answers from what is known and
stops at the first release it would have to measure.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Mapping, Sequence

from ..bisect.search import ProbeOutcome as Side
from ..bisect.search import bisect
from .measured import Presence

__all__ = ["Boundary", "RangeSearch", "search_range"]


@dataclass(frozen=True)
class Boundary:
    """Where the outcome changes: between ``before`` (the old side) and ``after`` (the new side)."""

    kind: str
    """``introduced`` (absent, then present) or ``fixed`` (present, then absent)."""
    before: str | None
    """The newest release measured on the old side; None: the new side holds from the oldest release searched."""
    after: str | None
    """The oldest release measured on the new side; None: the old side holds to the newest (open, for ``fixed``)."""
    unknown: tuple[str, ...] = ()
    """Releases between the two that decided nothing (not installable, untested): any of them may be the first."""

    @property
    def exact(self) -> bool:
        return self.before is not None and self.after is not None and not self.unknown

    def to_json(self) -> dict[str, object]:
        return {"kind": self.kind, "before": self.before, "after": self.after, "unknown": list(self.unknown)}


@dataclass(frozen=True)
class RangeSearch:
    """What the search knows: the releases it wants measured next, and each boundary once found."""

    wanted: tuple[str, ...]
    """Releases to measure next (oldest first); empty when the search is over."""
    introduced: Boundary | None = None
    fixed: Boundary | None = None
    note: str = ""
    """Why a boundary was not searched (the problem present on no release measured)."""

    @property
    def done(self) -> bool:
        return not self.wanted


class _Wanted(Exception):
    """The bisect reached a release that was never measured: the search stops there and asks for it."""

    def __init__(self, release: str) -> None:
        super().__init__(release)
        self.release = release


Classify = Callable[[Presence], Side]


def _present_new(outcome: Presence) -> Side:
    """Introduced: absent is the old side, present the new; untested is a skip."""
    return {Presence.ABSENT: Side.GOOD, Presence.PRESENT: Side.BAD}.get(outcome, Side.SKIP)


def _absent_new(outcome: Presence) -> Side:
    """Fixed: present is the old side, absent the new; untested is a skip."""
    return {Presence.PRESENT: Side.BAD, Presence.ABSENT: Side.GOOD}.get(outcome, Side.SKIP)


def _decided_new(outcome: Presence) -> Side:
    """Where the check starts to decide (older releases lack what it calls): untested old, decided new."""
    return Side.GOOD if outcome is Presence.UNTESTED else Side.BAD


def _untested_new(outcome: Presence) -> Side:
    """Where the check stops deciding (newer releases removed what it calls): decided old, untested new."""
    return Side.GOOD if outcome is Presence.UNTESTED else Side.BAD


def _split(candidates: Sequence[str], known: Mapping[str, Presence], classify: Classify, old: Side
           ) -> tuple[str, str, tuple[str, ...]] | str:
    """`bisect` over ``candidates`` (their ends known, on the two sides): (last old, first new, unknown between),
    or the release it needs measured next."""
    cache = {c: classify(known[c]) for c in candidates if c in known}

    def probe(release: str) -> Side:
        raise _Wanted(release)

    try:
        found = bisect(list(candidates), probe, old_outcome=old, cache=cache)
    except _Wanted as wanted:
        return wanted.release
    return found.last_same, found.first_different, tuple(found.ambiguous)


def _introduced(candidates: Sequence[str], known: Mapping[str, Presence], first: int) -> Boundary | str:
    """The boundary below the oldest present release (index ``first``), or the release to measure next."""
    below = [i for i in range(first) if known.get(candidates[i]) is Presence.ABSENT]
    if below:  # absent, then present: bisect between the newest absent and the oldest present
        found = _split(candidates[below[-1]:first + 1], known, _present_new, Side.GOOD)
        return found if isinstance(found, str) else Boundary("introduced", *found)
    if first == 0:
        return Boundary("introduced", None, candidates[0])
    if candidates[0] not in known:
        return candidates[0]
    # The oldest release decided nothing (the check needs what it lacks): find where the check starts deciding;
    # the oldest decided release is present (no absent below the first present), so it holds from there.
    found = _split(candidates[:first + 1], known, _decided_new, Side.GOOD)
    if isinstance(found, str):
        return found
    return Boundary("introduced", None, found[1], tuple(candidates[:candidates.index(found[1])]))


def _fixed(candidates: Sequence[str], known: Mapping[str, Presence], last: int) -> Boundary | str:
    """The boundary above the newest present release (index ``last``), or the release to measure next."""
    above = [i for i in range(last + 1, len(candidates)) if known.get(candidates[i]) is Presence.ABSENT]
    if above:  # present, then absent: bisect between the newest present and the oldest absent after it
        found = _split(candidates[last:above[0] + 1], known, _absent_new, Side.BAD)
        return found if isinstance(found, str) else Boundary("fixed", *found)
    newest = len(candidates) - 1
    if last == newest:
        return Boundary("fixed", candidates[last], None)
    if candidates[newest] not in known:
        return candidates[newest]
    # The newest release decided nothing: find where the check stops deciding; the newest decided is present.
    found = _split(candidates[last:], known, _untested_new, Side.BAD)
    if isinstance(found, str):
        return found
    return Boundary("fixed", found[0], None, tuple(candidates[candidates.index(found[0]) + 1:]))


def search_range(candidates: Sequence[str], known: Mapping[str, Presence], seeds: Sequence[str] = ()) -> RangeSearch:
    """The next releases to measure, or the two boundaries, from the outcomes ``known`` so far.

    ``candidates``: every release to search, oldest first (not installable ones too: measured, they decide
    nothing and become a boundary's uncertainty). ``known``: each measured release's outcome (releases outside
    ``candidates`` are ignored). ``seeds``: releases to measure with the ends while no release is known to hold the
    problem (an entry's ``measure_on``, a report's release): the bisects need one. Both ends are measured
    first; then each boundary is bisected on the side of
    the present releases known: *introduced* between the newest absent release below the oldest present one,
    *fixed* between the newest present one and the oldest absent release above it. A search with no present
    release known stops (the bisect needs one release on the problem's side): it says so in ``note``.
    """
    if len(set(candidates)) != len(candidates):
        raise ValueError("candidates must be distinct")
    if not candidates:
        return RangeSearch((), note="no release to search")
    known = {c: known[c] for c in candidates if c in known}
    present = [i for i, c in enumerate(candidates) if known.get(c) is Presence.PRESENT]
    # The seeds only while no release is known to hold the problem: one is all the two bisects need.
    first = [candidates[0], candidates[-1], *(c for c in seeds if c in candidates and not present)]
    ends = tuple(sorted(dict.fromkeys(c for c in first if c not in known), key=candidates.index))
    if ends:
        return RangeSearch(ends)
    if not present:
        return RangeSearch((), note="present on no release measured: no boundary to search")
    introduced = _introduced(candidates, known, present[0])
    fixed = _fixed(candidates, known, present[-1])
    wanted = tuple(sorted({step for step in (introduced, fixed) if isinstance(step, str)}, key=candidates.index))
    return RangeSearch(wanted, introduced if isinstance(introduced, Boundary) else None,
                       fixed if isinstance(fixed, Boundary) else None)
