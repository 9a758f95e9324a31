"""A probe's evidence: its whole output kept in a log beside its probe file, and a bounded tail for the report.

"The script exited 1 (affected)" says what counted, not what happened: the
output does. Each probe's output goes to the terminal as it comes and to
``<probe>.log`` (every run of the probe, in order; each line as the console
shows it, bounded by `kit.text_bounds`); the report and the JSON quote its
last lines, bounded in lines and in characters per line (a cut says how much,
`text_bounds.cut`), and name the log by its path in the project, never a
machine's absolute path.
"""

from __future__ import annotations

from collections import deque
from pathlib import Path

from ...text_bounds import cut

TAIL_LINES = 15
"""Lines of a probe's output the report and the JSON quote (the log has them all)."""

TAIL_LINE_CHARS = 300
"""Characters kept of one quoted line; a longer one says how much was cut."""


def output_tail(log_file: Path, lines: int = TAIL_LINES, width: int = TAIL_LINE_CHARS) -> list[str]:
    """The last ``lines`` non-empty lines of a log, each cut to ``width`` characters (a cut says so)."""
    kept: deque[str] = deque(maxlen=lines)
    try:
        with open(log_file, encoding="utf-8", errors="replace") as text:
            for line in text:
                line = line.rstrip()
                if line.strip():
                    kept.append(cut(line, width))
    except OSError:
        return []
    return list(kept)


