"""``known``: the catalogue as a list a person reads, or JSON a program reads (``--json``, one object each)."""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

from ..json_types import JsonObject
from .catalogue import Entry
from .measured import Range, load_measurements, measured_extra, measured_problem, ranges


def entry_json(entry: Entry, catalogue: Path) -> JsonObject:
    """The entry, its measurements and the ranges they make, per backend."""
    measured = load_measurements(catalogue, entry.id)
    unreadable = measured_problem(catalogue, entry.id)
    return {**entry.to_json(), "measurements": [m.to_json() for m in measured],
            "ranges": [r.to_json() for r in ranges(measured)],
            "workaround_runs": measured_extra(catalogue, entry.id, "workaround"),
            **({"measured_unreadable": unreadable} if unreadable else {})}


def listing(entries: Sequence[Entry], catalogue: Path) -> list[str]:
    lines = [f"{len(entries)} known problems (measured by the kit; 'never measured' where no run decided):"]
    for entry in entries:
        lines.append(f"  {entry.id} [{entry.kind}]: {entry.title}")
        lines.append(f"    upstream {entry.upstream}; fix: {fix_text(entry)}")
        if entry.targets:
            lines.append(f"    compiled for {', '.join(t.name for t in entry.targets)}, never run there "
                         f"(jax-kit audit RELEASE --target {entry.targets[0].name})")
        spans = ranges(load_measurements(catalogue, entry.id))
        lines.extend(f"    {range_text(span)}" for span in spans)
        unreadable = measured_problem(catalogue, entry.id)
        if unreadable:
            lines.append(f"    {unreadable}")
        elif not spans:
            lines.append("    never measured")
        lines.extend(f"    {said}" for said in workaround_lines(measured_extra(catalogue, entry.id, "workaround")))
    return lines


def workaround_lines(runs: object) -> list[str]:
    """``workaround measured (known/workarounds/ID.py): works on 0.4.13, 0.6.1; fails on 0.7.1``; [] where it never
    ran (``known --measure --workarounds``)."""
    if not isinstance(runs, dict):
        return []
    said = [f"{word} on {', '.join(str(r) for r in runs.get(key) or [])}"
            for word, key in (("works", "works_on"), ("fails", "fails_on"), ("untested", "untested_on"))
            if runs.get(key)]
    return [f"workaround measured (known/workarounds/ID.py): {'; '.join(said)}"] if said else []


def fix_text(entry: Entry) -> str:
    return f"commit {entry.fix_commit[:10]}" if entry.fix_commit else entry.fix_note


def _blur(after: str | None, unknown: Sequence[str]) -> str:
    """`` (between 0.4.13 and it: 0.4.14, 0.4.15 untested)`` where releases between the two sides decided nothing;
    "" where the step is between two neighbours measured."""
    return f" (between {after} and it: {', '.join(unknown)} untested)" if unknown else ""


def range_text(span: Range) -> str:
    """``cpu: present in 0.4.13, 0.4.30; absent in 0.4.35, 0.6.0: fixed in 0.4.35`` (untested releases named); a
    target's begins ``tpu:v5e:2x2 (compiled for TPU v5e 2x2 (4 devices), not run):``."""
    said = f"{span.where}: " + (f"present in {', '.join(span.present)}" if span.present
                                  else "present in no release measured")
    if span.absent:
        said += f"; absent in {', '.join(span.absent)}"
    if span.introduced_in:
        said += f": introduced in {span.introduced_in}{_blur(span.introduced_after, span.introduced_unknown)}"
    if span.fixed_in:
        said += f"{',' if span.introduced_in else ':'} fixed in {span.fixed_in}" \
                f"{_blur(span.fixed_after, span.fixed_unknown)}"
    elif span.present:
        said += ": open on the newest measured"
    if span.untested:
        said += f" (untested: {', '.join(span.untested)})"
    return said
