"""The kit's console: whatever a command prints or logs reaches the terminal inert.

A sentence the kit prints may quote what it did not write: a program's exit
message (``the program exited 1 (RuntimeError: ...)``), a record's reason, a
file's name. Rather than trust every one of the hundreds of places that print
to remember, the command line (`kit.cli.main`) sends its stdout, its stderr
and its log through `kit.markdown_text.inert` while a command runs. Colour
codes pass (a check's echoed output keeps its colours); the terminal obeys
nothing else. The same edge speaks as the command the user typed
(`kit.wording.as_spoken`: ``jax-kit ...`` under the installed command).
"""

from __future__ import annotations

import sys
from contextlib import contextmanager
from typing import Iterator, TextIO

from .log_events import Event, Log
from .markdown_text import inert
from .wording import as_spoken


class InertStream:
    """A text stream whose writes are made inert; everything else is the stream's own."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        shown = inert(as_spoken(text), colours=True)
        try:
            return self._stream.write(shown)
        except UnicodeEncodeError:  # a terminal in the C locale (LC_ALL=C, PYTHONUTF8=0): no traceback for a "…"
            return self._stream.write(encodable(shown, getattr(self._stream, "encoding", None) or "ascii"))

    def __getattr__(self, name: str) -> object:
        # Only sys.stdout's readers reach these (flush, fileno, encoding, ...): nothing in the kit names them.
        return getattr(self._stream, name)


def encodable(text: str, encoding: str) -> str:
    """``text`` as ``encoding`` can write it: a character it lacks written out (``\\u2026``); a file name's
    undecodable bytes (surrogates) kept, for the stream's surrogateescape to write back as they were."""
    def one(char: str) -> str:
        try:
            char.encode(encoding, "surrogateescape")
            return char
        except UnicodeEncodeError:
            return char.encode("ascii", "backslashreplace").decode("ascii")
    return "".join(one(char) for char in text)


def inert_log(log: Log) -> Log:
    """``log``, each line made inert on its way (an `Event` keeps its kind)."""
    def logged(line: str) -> None:
        shown = inert(as_spoken(line), colours=True)
        log(Event(shown, line.kind) if isinstance(line, Event) else shown)
    return logged


@contextmanager
def inert_streams() -> Iterator[None]:
    """sys.stdout and sys.stderr made inert for the block (a stream already made inert is kept as it is)."""
    saved = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = (stream if isinstance(stream, InertStream) else InertStream(stream)
                              for stream in saved)
    try:
        yield
    finally:
        sys.stdout, sys.stderr = saved
