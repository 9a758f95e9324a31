"""``known``: the catalogue as a list a person reads, or JSON a program reads (``--json``, one object each)."""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

from ..json_types import JsonObject
from .catalogue import Entry
from .measured import Range, load_measurements, measured_problem, ranges


def entry_json(entry: Entry, catalogue: Path) -> JsonObject:
    """The entry, its measurements and the ranges they make, per backend."""
    measured = load_measurements(catalogue, entry.id)
    unreadable = measured_problem(catalogue, entry.id)
    return {**entry.to_json(), "measurements": [m.to_json() for m in measured],
            "ranges": [r.to_json() for r in ranges(measured)], **({"measured_unreadable": unreadable}
                                                                   if unreadable else {})}


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
    return lines


def fix_text(entry: Entry) -> str:
    return f"commit {entry.fix_commit[:10]}" if entry.fix_commit else entry.fix_note


def range_text(span: Range) -> str:
    """``cpu: present in 0.4.13, 0.4.30; absent in 0.4.35, 0.6.0: fixed in 0.4.35`` (untested releases named); a
    target's begins ``tpu:v5e:2x2 (compiled for TPU v5e 2x2 (4 devices), not run):``."""
    said = f"{span.where}: " + (f"present in {', '.join(span.present)}" if span.present
                                  else "present in no release measured")
    if span.absent:
        said += f"; absent in {', '.join(span.absent)}"
    if span.introduced_in:
        said += f": introduced in {span.introduced_in}"
    if span.fixed_in:
        said += f"{',' if span.introduced_in else ':'} fixed in {span.fixed_in}"
    elif span.present:
        said += ": open on the newest measured"
    if span.untested:
        said += f" (untested: {', '.join(span.untested)})"
    return said
