"""``known --measure`` and ``known --verify``: the catalogue's ranges, measured by the kit and kept true.

``--measure`` runs each entry's check on the releases its ``measure_on`` names
and writes ``known/measured/ID.json``: the only source of a range. ``--verify``
runs them again on the releases measured and fails where an outcome changed,
so a range the catalogue shows is one that still re-measures (the integration
lane runs it). Both go release by release: the entries that name a release
share its installation and, as an audit's do, one interpreter per group of
devices (`kit.known.batch`), each run still kept as its own record.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Callable, Sequence

from ..config import Matrix
from ..log_events import Log
from ..records import release_key
from ..targets import Target
from .batch import measured_runs
from .catalogue import Entry
from .measured import Measurement, Presence, compiled_not_run, load_measurements, measured_problem, save_measurements
from .runs import run_entry


@dataclass(frozen=True)
class Job:
    """One entry on one release (compiled for ``target`` where it names one)."""

    entry: Entry
    release: str
    target: Target | None = None


def measure(matrix: Matrix, entries: Sequence[Entry], catalogue: Path, log: Log, isolated: bool = False) -> int:
    """Every entry on every release it names; the measured files written. Returns how many runs decided nothing."""
    jobs = [Job(entry, version, target) for entry in entries
            for target in entry.targets or (None,)  # an entry that names targets is compiled for each, never run
            for version in entry.measure_on]
    left = Counter(job.entry.id for job in jobs)
    seen: dict[str, list[Measurement]] = {entry.id: [] for entry in entries}

    def said(number: int, now: Measurement) -> None:
        job = jobs[number]
        print(f"{job.entry.id} on jax {job.release}{_for(now)}: {_said(now)}", flush=True)
        seen[job.entry.id].append(now)
        left[job.entry.id] -= 1
        if not left[job.entry.id]:  # the entry's last run: its file written now, not after every other entry's
            path = save_measurements(catalogue, job.entry.id, seen[job.entry.id], today())
            print(f"{job.entry.id}: written {path}", flush=True)

    runs = run_jobs(matrix, jobs, log, said, isolated)
    return sum(m.outcome is Presence.UNTESTED for m in runs)


def verify(matrix: Matrix, entries: Sequence[Entry], catalogue: Path, log: Log, isolated: bool = False) -> list[str]:
    """Each entry's measured outcomes measured again; one line per outcome that no longer holds."""
    broken: dict[tuple[int, int], str] = {}  # by the entry's place and the measurement's: as the catalogue reads
    jobs: list[Job] = []
    before: list[Measurement] = []
    places: list[tuple[int, int]] = []
    for entry_number, entry in enumerate(entries):
        stored = load_measurements(catalogue, entry.id)
        if not stored:
            broken[entry_number, 0] = f"{entry.id}: " + (measured_problem(catalogue, entry.id) or
                                                         f"never measured (run known --measure --only {entry.id})")
            continue
        for place, measured in enumerate(stored):
            if measured.outcome is Presence.UNTESTED:
                continue  # nothing was claimed there
            target = next((t for t in entry.targets if t.name == measured.target), None)
            if measured.target and target is None:
                broken[entry_number, place] = f"{entry.id}: measured for {measured.target}, which its targets " \
                                              f"no longer name (run known --measure --only {entry.id})"
                continue
            jobs.append(Job(entry, measured.release, target))
            before.append(measured)
            places.append((entry_number, place))

    def said(number: int, now: Measurement) -> None:
        job, then = jobs[number], before[number]
        line = f"{job.entry.id} on jax {then.release} ({_for(then).removeprefix(' for ') or then.backend}): " \
               f"measured {then.outcome.value}, now {_said(now)}"
        print(line, flush=True)
        if now.outcome is not then.outcome:
            broken[places[number]] = line

    run_jobs(matrix, jobs, log, said, isolated)
    return [line for _, line in sorted(broken.items())]


def run_jobs(matrix: Matrix, jobs: Sequence[Job], log: Log, said: Callable[[int, Measurement], None],
             isolated: bool = False) -> list[Measurement]:
    """Each job's measurement, in the order given; ``said`` is told each (by its place in ``jobs``) as it comes.

    The runs on each release share its installation and, where their checks need the same devices, one
    interpreter (`kit.known.batch.measured_runs`): one line says each release's group as it starts. A run
    compiled for a target runs alone (the compiler's settings are read before jax is imported), and so does every
    run with ``isolated`` (``--isolated``: checks in one interpreter can touch each other's state).
    """
    answered: dict[int, Measurement] = {}
    on_cpu = [] if isolated else [(number, job) for number, job in enumerate(jobs) if job.target is None]
    for release in sorted({job.release for _, job in on_cpu}, key=release_key):
        group = [(number, job) for number, job in on_cpu if job.release == release]
        print(f"jax {release}: {len(group)} checks, those that need the same devices in one interpreter "
              f"({', '.join(job.entry.id for _, job in group)})", flush=True)
        runs = measured_runs(matrix, [job.entry for _, job in group], log, records_folder(matrix), version=release)
        for (number, job), now in zip(group, runs):
            answered[number] = now
            said(number, now)
    for number, job in enumerate(jobs):
        if job.target is not None or isolated:
            answered[number] = run_entry(matrix, job.entry, log, records_folder(matrix), version=job.release,
                                         target=job.target)
            said(number, answered[number])
    return [answered[number] for number in range(len(jobs))]


def records_folder(matrix: Matrix) -> Path:
    """Where the catalogue's runs keep their records: beside the matrix's, apart from them."""
    return matrix.results_dir.parent / "known" / "results"


def _for(measurement: Measurement) -> str:
    """`` for tpu:v5e:2x2 (compiled for TPU v5e 2x2 (4 devices), not run)``; "" for a run on its backend."""
    return f" for {measurement.target} ({compiled_not_run(measurement.target)})" if measurement.target else ""


def _said(measurement: Measurement) -> str:
    reason = f" ({measurement.reason})" if measurement.reason else ""
    return f"{measurement.outcome.value}{reason}"


def today() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%d")
