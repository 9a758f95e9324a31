"""``known --measure --bisect``: each entry's range found by release bisection over every release, all entries
measured together release by release.

`kit.known.boundaries.search_range` says, from the outcomes known so far, which releases each entry's two
bisects want next. One round measures what every entry wants, grouped by release (`kit.known.measure.run_jobs`:
one installation and, for the checks that need the same devices, one interpreter per release), then asks again,
until no entry wants anything. Every probe is a real run with its record, kept in ``known/measured/ID.json``
beside the search's answer (``bisection``: the releases searched, each boundary and its unknown releases), written
after each probe, so an interrupted search resumes from what it kept: the outcomes already measured are the
search's starting points (``--fresh`` starts without them, as after a check is changed).
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable, Sequence

from packaging.version import Version

from ..config import Matrix
from ..errors import ArchiveUnreachable
from ..install import PackageIndex, open_index
from ..json_types import JsonObject
from ..log_events import Log
from ..records import release_key
from .boundaries import RangeSearch, search_range
from .catalogue import Entry
from .measure import Job, run_jobs, today
from .measured import Measurement, Presence, load_measurements, save_measurements

OLDEST = "0.4.13"
"""The oldest release the catalogue's checks are written for (repro/ runs from 0.4.13 on)."""


def every_release(index: PackageIndex, oldest: str = OLDEST, newest: str = "") -> list[str]:
    """Every final JAX release the index lists from ``oldest`` to ``newest`` (the newest: all), oldest first;
    yanked and not installable ones too: measured, they decide nothing, and so name a boundary's uncertainty."""
    low, high = Version(oldest), Version(newest) if newest else None
    return [str(v) for v in index.jax_releases(include_yanked=True)
            if not v.is_prerelease and not v.is_devrelease and v >= low and (high is None or v <= high)]


def searchable(entry: Entry) -> bool:
    """Entries the bisect measures: those run on CPU host devices (a target's entry is compiled for a chip, one
    process a release; a CUDA-only entry decides nothing here)."""
    return not entry.targets and "cpu" in entry.shows_on


def known_outcomes(measurements: Sequence[Measurement]) -> dict[str, Presence]:
    """Each release's outcome on CPU, the newest measurement of a release counting (a later run replaces one)."""
    return {m.release: m.outcome for m in measurements if not m.target and m.backend == "cpu"}


def bisection_json(candidates: Sequence[str], search: RangeSearch) -> JsonObject:
    """What ``known/measured/ID.json`` keeps of the search: the releases searched and each boundary found."""
    return {"backend": "cpu", "candidates": list(candidates), "done": search.done, "wanted": list(search.wanted),
            "introduced": search.introduced.to_json() if search.introduced else None,
            "fixed": search.fixed.to_json() if search.fixed else None, "note": search.note}


def bisect_ranges(matrix: Matrix, entries: Sequence[Entry], catalogue: Path, log: Log, *,
                  candidates: Sequence[str] | None = None, fresh: bool = False, isolated: bool = False,
                  max_rounds: int = 40) -> dict[str, RangeSearch]:
    """Every searchable entry's range bisected over ``candidates`` (default: every release from `OLDEST`), round
    by round; each entry's measured file written after each of its probes. Returns each entry's search."""
    candidates = list(candidates) if candidates is not None else every_release(open_index(matrix))
    entries = [e for e in entries if searchable(e)]
    kept: dict[str, list[Measurement]] = {e.id: [] if fresh else load_measurements(catalogue, e.id) for e in entries}
    searches = {e.id: search_range(candidates, known_outcomes(kept[e.id]), e.measure_on) for e in entries}
    for number in range(1, max_rounds + 1):
        jobs = [Job(e, release) for e in entries for release in searches[e.id].wanted]
        if not jobs:
            break
        releases = sorted({job.release for job in jobs}, key=release_key)
        print(f"round {number}: {len(jobs)} probes of {len({j.entry.id for j in jobs})} entries on "
              f"{len(releases)} releases ({', '.join(releases)})", flush=True)

        def said(job: Job, now: Measurement) -> None:
            kept[job.entry.id] = [m for m in kept[job.entry.id] if not _same_place(m, now)] + [now]
            search = search_range(candidates, known_outcomes(kept[job.entry.id]), job.entry.measure_on)
            save_measurements(catalogue, job.entry.id, kept[job.entry.id], today(),
                              bisection=bisection_json(candidates, search))
            print(f"  {job.entry.id} on jax {job.release}: {now.outcome.value} ({now.reason[:160]})", flush=True)

        for release in releases:
            measure_release(matrix, [job for job in jobs if job.release == release], log, said, isolated)
        searches = {e.id: search_range(candidates, known_outcomes(kept[e.id]), e.measure_on) for e in entries}
    for entry in entries:
        print(f"{entry.id}: {summary(searches[entry.id])}", flush=True)
    return searches


def measure_release(matrix: Matrix, jobs: Sequence[Job], log: Log, said: Callable[[Job, Measurement], None],
                    isolated: bool) -> None:
    """One release's jobs, batched (`run_jobs`). A release whose jaxlib only JAX's archive of pruned jaxlibs might
    hold, out of reach from here, is untested with that sentence (no record: nothing ran), as a bisect skips it."""
    try:
        run_jobs(matrix, jobs, log, lambda place, now: said(jobs[place], now), isolated)
    except ArchiveUnreachable as unreachable:
        for job in jobs:
            said(job, Measurement(job.release, "cpu", Presence.UNTESTED, f"not installable here: {unreachable}"))


def _same_place(a: Measurement, b: Measurement) -> bool:
    return (a.release, a.backend, a.target) == (b.release, b.backend, b.target)


def summary(search: RangeSearch) -> str:
    """One line: ``introduced in 0.4.36 (after 0.4.35); fixed in 0.4.18 (after 0.4.13; unknown: 0.4.14, ...)``."""
    if not search.done:
        return f"not finished: wants {', '.join(search.wanted)}"
    if search.note:
        return search.note
    parts = []
    for boundary in (search.introduced, search.fixed):
        if boundary is None:
            continue
        if boundary.kind == "fixed" and boundary.after is None and boundary.unknown:
            # "open" would claim the newer releases still have it, which no probe there said
            parts.append(f"present on {boundary.before}, the newest decided; not decided after it "
                         f"(unknown: {', '.join(boundary.unknown)})")
            continue
        if boundary.kind == "fixed" and boundary.after is None:
            parts.append(f"open: present on the newest decided, {boundary.before}")
            continue
        if boundary.kind == "introduced" and boundary.before is None:
            parts.append(f"present from {boundary.after}, the oldest decided")
        else:
            parts.append(f"{boundary.kind} in {boundary.after} (after {boundary.before})")
        if boundary.unknown:
            parts[-1] += f" (unknown: {', '.join(boundary.unknown)})"
    return "; ".join(parts)
