"""``known --measure`` and ``known --verify``: the catalogue's ranges, measured by the kit and kept true.

``--measure`` runs each entry's check on the releases its ``measure_on`` names
and writes ``known/measured/ID.json``: the only source of a range. ``--verify``
runs them again on the releases measured and fails where an outcome changed,
so a range the catalogue shows is one that still re-measures (the integration
lane runs it).
"""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path
from typing import Sequence

from ..config import Matrix
from ..log_events import Log
from .catalogue import Entry
from .measured import Measurement, Outcome, compiled_not_run, load_measurements, save_measurements
from .runs import run_entry


def measure(matrix: Matrix, entries: Sequence[Entry], catalogue: Path, log: Log) -> int:
    """Every entry on every release it names; the measured files written. Returns how many runs decided nothing."""
    undecided = 0
    for entry in entries:
        seen = []
        for target in entry.targets or (None,):  # an entry that names targets is compiled for each, never run
            for version in entry.measure_on:
                seen.append(run_entry(matrix, entry, log, records_folder(matrix), version=version, target=target))
                print(f"{entry.id} on jax {version}{_for(seen[-1])}: {_said(seen[-1])}", flush=True)
        undecided += sum(m.outcome is Outcome.UNTESTED for m in seen)
        path = save_measurements(catalogue, entry.id, seen, _today())
        print(f"{entry.id}: written {path}", flush=True)
    return undecided


def verify(matrix: Matrix, entries: Sequence[Entry], catalogue: Path, log: Log) -> list[str]:
    """Each entry's measured outcomes measured again; one line per outcome that no longer holds."""
    broken = []
    for entry in entries:
        stored = load_measurements(catalogue, entry.id)
        if not stored:
            broken.append(f"{entry.id}: never measured (run known --measure --only {entry.id})")
            continue
        for before in stored:
            if before.outcome is Outcome.UNTESTED:
                continue  # nothing was claimed there
            target = next((t for t in entry.targets if t.name == before.target), None)
            if before.target and target is None:
                broken.append(f"{entry.id}: measured for {before.target}, which its targets no longer name "
                              f"(run known --measure --only {entry.id})")
                continue
            now = run_entry(matrix, entry, log, records_folder(matrix), version=before.release, target=target)
            line = f"{entry.id} on jax {before.release} ({_for(before).removeprefix(' for ') or before.backend}): measured " \
                   f"{before.outcome.value}, now {_said(now)}"
            print(line, flush=True)
            if now.outcome is not before.outcome:
                broken.append(line)
    return broken


def records_folder(matrix: Matrix) -> Path:
    """Where the catalogue's runs keep their records: beside the matrix's, apart from them."""
    return matrix.results_dir.parent / "known" / "results"


def _for(measurement: Measurement) -> str:
    """`` for tpu:v5e:2x2 (compiled for TPU v5e 2x2 (4 devices), not run)``; "" for a run on its backend."""
    return f" for {measurement.target} ({compiled_not_run(measurement.target)})" if measurement.target else ""


def _said(measurement: Measurement) -> str:
    reason = f" ({measurement.reason})" if measurement.reason else ""
    return f"{measurement.outcome.value}{reason}"


def _today() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%d")
