"""How a SLURM array task ended when it left no record, read from the task's output file.

A task SLURM cancels (``scancel``, its time limit, preemption, a node that
failed) never gets to write a record; slurmstepd writes why into the task's
output instead (``*** JOB 12 ON node01 CANCELLED AT 2026-11-30T09:10:00 DUE TO
TIME LIMIT ***``). A task that ended on its own without a record (the kit
met an error) printed an ``ERROR:`` line there. Either way the sweep says
that, not merely "no record".
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from ..text_bounds import REASON_CHARS, cut

# slurmstepd's words for a cancelled job or step; no "DUE TO" means a user or an administrator (scancel).
CANCELLED = re.compile(r"\*\*\* (?:JOB|STEP) \S+ ON \S+ CANCELLED AT (\S+)(?: DUE TO (.+?))? \*\*\*")

# Only the end of the output matters, and a task may have printed gigabytes.
TAIL_BYTES = 64 * 1024


@dataclass(frozen=True)
class TaskEnd:
    """A task without a record: ``cancelled`` (by SLURM, with when and why) or ``error`` (it ended on its own)."""

    status: str
    sentence: str


def task_end(output: Path) -> TaskEnd:
    """Why the task whose output is ``output`` left no record, in one sentence that names the file."""
    text = _tail(output)
    cancels = list(CANCELLED.finditer(text))
    if cancels:
        when, why = cancels[-1].group(1), cancels[-1].group(2)
        how = f"due to {why.lower()}" if why else "by scancel (a user or an administrator)"
        return TaskEnd("cancelled", f"cancelled by SLURM at {when} {how}; see {output}")
    errors = [line for line in text.splitlines() if line.startswith("ERROR: ")]
    said = f" ({cut(errors[-1], REASON_CHARS)})" if errors else ""
    return TaskEnd("error", f"finished without a record{said}; see {output}")


def _tail(path: Path) -> str:
    try:
        with open(path, "rb") as handle:
            handle.seek(0, 2)
            handle.seek(max(handle.tell() - TAIL_BYTES, 0))
            return handle.read().decode("utf-8", "replace")
    except OSError:
        return ""  # not written (yet), or not shared with this node: nothing to add
