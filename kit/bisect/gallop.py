"""One bound given, the other found: gallop over the releases away from it.

``--bad 0.4.35`` alone asks "is it fixed, and where?". The newest release is
probed first: if it still shows the bug, nothing newer fixed it and the
bisect stops there, one probe later, saying so. Otherwise the releases after
the known bound are probed at doubling distances from it (1, 3, 7, 15 … away,
each step measured from the newest release that still showed the given
outcome), so a change a few releases away costs a few probes, near the
releases a user has usually built already, and one far away costs about
2·log2 of its distance. With ``--good`` alone it is the same hunt for the
release that broke it. Where the known bound is the newest release, the
gallop goes back instead, older by doubling steps.

Every outcome already known (the probe cache, a current record, a release
the index rules out) is used without a run, before any probe and at each
step, and the bound found is the nearest one those outcomes and the probes
allow: the given bound moves up too, to the newest release that showed it.
:func:`gallop` is pure over a probe callable and a cache, like
`kit.bisect.search`.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable, Generic, Mapping, MutableMapping, Sequence, TypeVar

from ..config import Matrix
from ..errors import UsageError
from ..install import InstallKey, PackageIndex
from ..log_events import Log
from .candidates import Candidate, list_candidates, release_versions
from .specs import HowToSearch
from .outcomes import describe
from .probe import Prober, ReleaseSubject
from .search import ProbeOutcome

T = TypeVar("T")

FAR_END_TRIES = 3
"""Releases tried from the far end when the newest ones cannot be tested (not installable, crashed)."""

OLDER_REACH = 64
"""How many releases back a gallop toward older releases may look (about six doubling steps)."""


@dataclass
class Galloped(Generic[T]):
    """What a gallop found: the other bound, and the given one moved as near to it as the probes allow."""

    found: T | None
    """The nearest candidate with the other outcome; None when none showed it."""
    near: T | None
    """The candidate nearest to ``found`` that showed the given outcome; None: the given bound itself."""
    probed: list[T] = field(default_factory=list)
    """Candidates probed, in order (known outcomes are not probes)."""
    far_end: T | None = None
    """The far-end candidate that answered "is it there at all?" (when the gallop went newer)."""


def gallop(side: Sequence[T], given: ProbeOutcome, probe: Callable[[T], ProbeOutcome], cache: MutableMapping[T, ProbeOutcome],
           far_first: bool = True) -> Galloped[T]:
    """Find the nearest candidate of ``side`` (ordered from the known bound away) with the other outcome.

    ``cache`` holds what is known (it gains every probe). ``far_first``: the
    far end is probed first, and a given outcome there ends the gallop at once.
    """
    other = ProbeOutcome.GOOD if given is ProbeOutcome.BAD else ProbeOutcome.BAD
    probed: list[T] = []

    def look(index: int) -> ProbeOutcome:
        if side[index] not in cache:
            cache[side[index]] = probe(side[index])
            probed.append(side[index])
        return cache[side[index]]

    far_end = None
    if far_first and side:
        for index in range(len(side) - 1, max(-1, len(side) - 1 - FAR_END_TRIES), -1):
            if look(index) is not ProbeOutcome.SKIP:
                far_end = side[index]
                break
        if far_end is not None and cache[far_end] is given:
            return Galloped(None, far_end, probed, far_end)
    near, step = -1, 1
    while True:
        limit = next((i for i, c in enumerate(side) if cache.get(c) is other), len(side))
        near = max([near, *(i for i in range(limit) if cache.get(side[i]) is given)])
        index = near + step
        if index >= limit:
            found = side[limit] if limit < len(side) else None
            return Galloped(found, side[near] if near >= 0 else None, probed, far_end)
        look(index)
        step *= 2


def one_sided(search: HowToSearch) -> bool:
    """True when exactly one of --good and --bad was given."""
    return (search.good is None) != (search.bad is None)


def side_versions(index: PackageIndex, search: HowToSearch) -> tuple[list[str], bool]:
    """(the releases from the given bound away, the bound first; True when they run newer)."""
    bound = search.good or search.bad
    assert bound is not None
    flag = "--good" if search.good else "--bad"
    releases = [str(v) for v in index.jax_releases(include_yanked=True) if not v.is_devrelease]
    if bound not in releases:
        raise UsageError(f"{flag} {bound} is not a jax release on {index.url}",
                         f"the newest releases are {', '.join(releases[-4:])}")
    at = releases.index(bound)
    if at < len(releases) - 1:
        return releases[at:], True
    return list(reversed(releases[max(0, at - OLDER_REACH):at + 1])), False


def bounds_found(search: HowToSearch, script: bool, versions: Sequence[str], newer: bool, result: Galloped[str],
                 seconds: float, known: int, unjudged: str = "") -> tuple[str, str, str]:
    """(good, bad, how they were found), or the UsageError that says no release shows the other outcome (``script``:
    said in a ``--script``'s words, pass/fail). ``unjudged``: where every release probed was skipped, the first
    one's reason (``jax 0.12.1: the script failed otherwise: ...``): then nothing past the bound was judged at all."""
    given_flag, other_flag = ("--bad", "--good") if search.bad else ("--good", "--bad")
    bound = versions[0]
    given = ProbeOutcome.BAD if search.bad else ProbeOutcome.GOOD
    other = ProbeOutcome.GOOD if given is ProbeOutcome.BAD else ProbeOutcome.BAD
    probed = ", ".join(result.probed) or "none"
    cost = (f"{len(result.probed)} probe{'' if len(result.probed) == 1 else 's'} ({probed}), "
            f"{known} outcome{'' if known == 1 else 's'} known before, {seconds:.1f} s")
    if result.found is None and unjudged:
        # Every release probed failed otherwise (a fix that raises a better error is one): none says good or bad,
        # so whether and where it changed is not known; "not fixed in any release" would be a claim no probe made.
        raise UsageError(f"{given_flag} {bound} alone: no release {'after' if newer else 'before'} jax {bound} could "
                         f"be judged, each probed one was skipped (the first, {unjudged}); nothing to bisect ({cost})",
                         f"whether and where it {'was fixed' if given is ProbeOutcome.BAD and newer else 'changed'} "
                         f"cannot be told by this check: give {other_flag} with a release you know is {other.value}, "
                         "or edit the check so that such a release's failure is judged")
    if result.found is None:
        where = (f"the newest release, jax {result.far_end}, is {describe(given, script)} too"
                 if result.far_end is not None and newer else
                 f"no release {'after' if newer else 'before'} jax {bound} that could be tested shows "
                 f"{describe(other, script)}")
        raise UsageError(f"{given_flag} {bound} alone: {where}; nothing to bisect ({cost})",
                         f"give {other_flag} with a release you know is {other.value}"
                         + (": the bug is not fixed in any release yet" if given is ProbeOutcome.BAD and newer
                            and result.far_end is not None else ""))
    near = result.near or bound
    good, bad = (result.found, near) if given is ProbeOutcome.BAD else (near, result.found)
    moved = f"; {given_flag} moved to jax {near}, the nearest release that still tested {given.value}" \
        if near != bound else ""
    how = (f"{given_flag} {bound} given; {other_flag} found by galloping {'newer' if newer else 'older'}"
           + (f" (newest first: jax {result.far_end} is {other.value})" if result.far_end else "")
           + f": jax {result.found} is {describe(other, script)}{moved}; cost {cost}")
    return good, bad, how


def _first_skip(probed: Sequence[str], known: Mapping[str, ProbeOutcome], prober: Prober[ReleaseSubject]) -> str:
    """``jax V: why`` for the first release probed, where every release probed was skipped; else empty."""
    if not probed or any(known.get(version) is not ProbeOutcome.SKIP for version in probed):
        return ""
    seen = prober.observations.get(probed[0])
    why = seen.found.reason.split(", and its output does not match bad_if")[0] if seen is not None else "skipped"
    return f"jax {probed[0]}: {why if len(why) <= 160 else why[:159] + '…'}"


def find_bounds(matrix: Matrix, search: HowToSearch, script: bool, key: InstallKey, index: PackageIndex,
                make_prober: Callable[[list[Candidate]], Prober[ReleaseSubject]],
                log: Log) -> tuple[str, str, str, list[Candidate], Prober[ReleaseSubject], dict[str, ProbeOutcome]]:
    """(good, bad, how they were found, the candidates between them, the prober, every outcome the gallop knew).

    The prober is made for the releases from the given bound away, and the search that follows keeps it, so
    what the gallop probed is not probed again.
    """
    side, newer = side_versions(index, search)
    log(f"listing {len(side)} releases {'from' if newer else 'back from'} jax {side[0]} from the index's "
        "metadata, to find the other bound (nothing is resolved or downloaded)")
    wide = list_candidates(matrix, side, key, index)
    prober = make_prober(wide)
    known = {**prober.ruled_out(), **prober.known_outcomes()}
    started, before = time.monotonic(), len(known)
    # Older releases have no "is it there at all?" end: the oldest is no question anyone asks.
    galloped = gallop(side[1:], ProbeOutcome.BAD if search.bad else ProbeOutcome.GOOD, prober, known, far_first=newer)
    good, bad, how = bounds_found(search, script, side, newer, galloped, time.monotonic() - started, before,
                                  _first_skip(galloped.probed, known, prober))
    log(how)
    by_version = {c.version: c for c in wide}  # oldest first, as the search walks them
    candidates = [by_version[v] for v in release_versions(index, good, bad) if v in by_version]
    return good, bad, how, candidates, prober, known
