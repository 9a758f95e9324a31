"""The closing table of ``nox -s matrix``: a row per cell and what became of it in this sweep.

release | check | status | verdict | this run, then a one-line tally and why
cells failed (the sweep's progress lines are kit/matrix/progress.py).
"""

from __future__ import annotations

from typing import Sequence

from ..records import Status
from .cell import CellResult

# Statuses that --strict turns into exit code 1. "error" is the sweep's own
# word for an unexpected exception in a cell: no record was written for it.
# "unsaved": the cell ran but its record could not be written into the
# results folder (kept aside instead); that fails the sweep even without --strict.
# "cancelled": SLURM cancelled the cell's array task (scancel, a time limit).
FAILED = (Status.CRASHED, Status.TIMED_OUT, "error", "unsaved", "cancelled")


def count_cells(count: int) -> str:
    return f"{count} cell" + ("" if count == 1 else "s")


def render_table(outcomes: Sequence[CellResult]) -> str:
    """release | check | status | verdict | this run, a one-line tally, and why cells failed."""
    header = ("release", "check", "status", "verdict", "this run")
    rows = [(o.cell.version, o.cell.check + (f" for {o.cell.target.name}" if o.cell.target else ""),
             o.status or "-", o.verdict or "-", _this_run(o)) for o in outcomes]
    widths = [max(len(row[i]) for row in (header, *rows)) for i in range(len(header))]
    lines = ["  ".join(text.ljust(width) for text, width in zip(row, widths)).rstrip() for row in (header, *rows)]
    ran = sum(1 for o in outcomes if _this_run(o) == Status.RAN)
    failed = sum(1 for o in outcomes if o.status in FAILED)
    current = sum(1 for o in outcomes if o.current)
    lines.append(f"{count_cells(len(outcomes))}: {ran} ran, {current} current (skipped), "
                 f"{failed} crashed, timed out, cancelled or errored")
    # The reason is in the record (or the log, for an error), but a reader of
    # the table should not have to dig to learn why a cell failed.
    lines += [f"  {o.cell}: {_shorten(o.note)}" for o in outcomes if o.status in FAILED]
    return "\n".join(lines)


# What became of a cell that has no record of this sweep, in the table's "this run" column.
NOT_RUN = {"submitted": "submitted", "cancelled": "cancelled", "error": "no record", "unsaved": "record kept aside"}


def _this_run(outcome: CellResult) -> str:
    return "current, skipped" if outcome.current else NOT_RUN.get(outcome.status or "", Status.RAN)


def _shorten(text: str, limit: int = 200) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
