"""What a bisect says on the console: one line per probe and the phase lines; ``-v`` says everything.

A commit bisect of ten probes printed about 490 lines: each probe's install
plan, the repro's command line and its whole output, each overlay laid over
a build. All of that stays where it is kept (each probe's log beside its
probe file, the report's folded sections); the console keeps what a person
follows while waiting: the plan, one line per probe, the phase lines, and the
summary at the end. Which lines are which is said where each is written: a
line is a `kit.log_events.Event` of its kind (a detail, a probe, ...), and
this console keeps or folds it by that kind alone, so rewording a message
never changes who sees it. A plain line (a warning, a new kind of message)
is shown, never lost.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..log_events import Log
from ..log_events import Kind, kind_of

FOLDED = (Kind.DETAIL, Kind.OUTPUT)
"""Kinds a quiet console leaves out: how a probe was prepared and started, and a command's own output."""

PROBE_WIDTH = 150
"""Characters of a probe line kept on a quiet console: its outcome and the start of its reason."""


@dataclass
class Console:
    """A log for the bisect's layers: everything with ``verbose``, else the phase and probe lines only."""

    log: Log
    verbose: bool = False
    hidden: int = 0
    """How many messages a quiet console left out."""

    def __call__(self, message: str) -> None:
        if self.verbose:
            self.log(message)
            return
        kind = kind_of(message)
        if kind in FOLDED or not message:
            self.hidden += 1
            return
        if kind is Kind.PROBE:
            # Its first line; the next (why it was reused, why it ran again) are in the report.
            message = shorten(message.split("\n", 1)[0], PROBE_WIDTH)
        self.log(message)


def shorten(line: str, width: int) -> str:
    """``line`` cut to ``width`` characters, the cut marked with an ellipsis."""
    return line if len(line) <= width else line[:width - 1].rstrip() + "…"
