"""What a line the kit logs is: a phase, a probe, a detail, a command's output, a warning.

Every layer logs through a plain ``Callable[[str], None]`` (``print``, a list's
``append``, a bisect's console): a line says what kind it is by being an
`Event`, a ``str`` that carries its `Kind`. Anything that only prints sees the
text; the quiet console (kit/bisect/console.py) keeps or folds a line by its
kind, never by how its sentence is worded, so rewording a message changes
nothing about who sees it. A plain ``str`` is a phase line: shown.
"""

from __future__ import annotations

import enum
from typing import Callable


class Kind(enum.Enum):
    PHASE = "phase"
    """Where the work stands (a release search's candidates, a commit phase's start): always shown."""
    PROBE = "probe"
    """One probe's outcome: shown, shortened on a quiet console."""
    DETAIL = "detail"
    """How a probe was prepared and started (an environment reused, a lock read, an overlay laid): ``-v``."""
    OUTPUT = "output"
    """A command's own output, echoed: ``-v``; it is kept in the probe's log either way."""
    WARNING = "warning"
    """Something the user should know: always shown."""


class Event(str):
    """A logged line and its kind (`Kind`); equal to, and printed as, its text."""

    kind: Kind

    def __new__(cls, text: str, kind: Kind = Kind.PHASE) -> Event:
        event = super().__new__(cls, text)
        event.kind = kind
        return event


def detail(text: str) -> Event:
    return Event(text, Kind.DETAIL)


def kind_of(line: str) -> Kind:
    """A line's kind: its own where it is an `Event`, else a phase line."""
    return line.kind if isinstance(line, Event) else Kind.PHASE


Log = Callable[[str], None]
"""How every layer logs: any callable taking a line (an `Event` where its kind matters)."""
