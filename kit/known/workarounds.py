"""``known --measure --workarounds``: each entry's workaround run on the releases measured with its problem.

An entry's workaround is a claim (``workaround = "..."`` in its TOML); where ``known/workarounds/ID.py`` is
beside the catalogue, it is measured. That script applies the workaround to the check's own inputs and speaks the
check's protocol: exit 0 the workaround gives the right answer there, 1 it does not, 125 it cannot tell. It runs on
every release the entry's CPU range holds the problem in (the releases the workaround is offered for), batched
per release as the checks are, each run with its record, and ``known/measured/ID.json`` keeps the answers under
``workaround``: which releases it works on, and which not (said, never hidden).
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Sequence

from ..config import Matrix
from ..json_types import JsonObject
from ..log_events import Log
from .catalogue import Entry
from .measure import Job, run_jobs, today
from .measured import Measurement, Presence, load_measurements, ranges, save_extra

WORDS = {Presence.ABSENT: "works", Presence.PRESENT: "fails", Presence.UNTESTED: "untested"}
"""A workaround script's outcome in the catalogue's words: exit 0 (the problem gone with it) is *works*."""


def workaround_script(catalogue: Path, entry_id: str) -> Path:
    return catalogue / "workarounds" / f"{entry_id}.py"


def affected_releases(catalogue: Path, entry: Entry) -> list[str]:
    """The releases measured with the problem on CPU: those the workaround is offered for."""
    return [r for span in ranges(load_measurements(catalogue, entry.id))
            if not span.target and span.backend == "cpu" for r in span.present]


def measure_workarounds(matrix: Matrix, entries: Sequence[Entry], catalogue: Path, log: Log,
                        isolated: bool = False) -> int:
    """Each entry's workaround script on its affected releases; the answers written. Returns how many decided
    nothing."""
    jobs: list[Job] = []
    for entry in entries:
        script = workaround_script(catalogue, entry.id)
        if script.is_file():
            aimed = dataclasses.replace(entry, id=f"{entry.id}-workaround", check=script)
            jobs += [Job(aimed, release) for release in affected_releases(catalogue, entry)]
    print(f"{len(jobs)} workaround runs of {len({j.entry.id for j in jobs})} entries", flush=True)
    answers: dict[str, list[Measurement]] = {}

    def said(place: int, now: Measurement) -> None:
        entry_id = jobs[place].entry.id.removesuffix("-workaround")
        print(f"{entry_id}'s workaround on jax {now.release}: {WORDS[now.outcome]} ({now.reason[:160]})", flush=True)
        answers.setdefault(entry_id, []).append(now)

    runs = run_jobs(matrix, jobs, log, said, isolated)
    for entry_id, got in answers.items():
        save_extra(catalogue, entry_id, "workaround", workaround_json(got))
    return sum(m.outcome is Presence.UNTESTED for m in runs)


def workaround_json(runs: Sequence[Measurement]) -> JsonObject:
    """What ``known/measured/ID.json`` keeps: each run, and the releases it works and fails on."""
    return {"measured_on": today(),
            "works_on": [m.release for m in runs if m.outcome is Presence.ABSENT],
            "fails_on": [m.release for m in runs if m.outcome is Presence.PRESENT],
            "untested_on": [m.release for m in runs if m.outcome is Presence.UNTESTED],
            "runs": [{**m.to_json(), "workaround": WORDS[m.outcome]} for m in runs]}
