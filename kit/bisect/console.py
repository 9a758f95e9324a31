"""What a bisect says on the console: one line per probe and the phase lines; ``-v`` says everything.

A commit bisect of ten probes printed about 490 lines: each probe's install
plan, the repro's command line and its whole output, each overlay laid over
a build. All of that stays where it is kept (each probe's log beside its
probe file, the report's folded sections); the console keeps what a person
follows while waiting: the plan, one line per probe, the phase lines, and the
summary at the end. Which lines are detail is decided here, in one place, by
the shape of the lines the install, overlay and run layers log; a line of any
other shape (a warning, a new kind of message) is shown, never lost.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .options import Log

DETAIL = re.compile(
    r"^(reusing environment "
    r"|jax \S+: as locked in "
    r"|resolved .* as of "
    r"|Python \d+\.\d+\S*: jaxlib "
    r"|running "
    r"|jax \S+'s environment: "
    r"|laid \S+'s jax/ "
    r"|  \S+ on jaxlib \S+: "
    r"|after the failure, asked whether JAX itself runs here)")
"""Lines that say how a probe was prepared and started: shown with ``-v`` only."""

_UNRUNNABLE_COMMIT = re.compile(r"^probe commit \S+ \(.*\): \S+ \[index\] ")
"""A commit no build runs, skipped unrun: the commit search says how many and why in one line (`commit_search`)."""

_CONTINUATION = re.compile(r"^  (reused: the same |ran again: |taken from: )")
"""A probe line's second and third lines (why it was reused, why it ran again): the report has them."""

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
        lines = [line for line in message.split("\n") if not _CONTINUATION.match(line)]
        if not lines or DETAIL.match(lines[0]) or _UNRUNNABLE_COMMIT.match(lines[0]):
            self.hidden += 1
            return
        if lines[0].startswith("probe "):
            lines = [shorten(lines[0], PROBE_WIDTH)]
        self.log("\n".join(lines))


def shorten(line: str, width: int) -> str:
    """``line`` cut to ``width`` characters, the cut marked with an ellipsis."""
    return line if len(line) <= width else line[:width - 1].rstrip() + "…"
