"""What the kit echoes and keeps of a child's output: lines, each bounded, from chunks.

The pipe is read in chunks (kit/run/child_processes.py), never a line at a
time: a script that prints one 20 MB line would otherwise hold all of it in
memory, echo all of it and keep it in its record. Here each line keeps at most
its first ``LINE_ECHO_BYTES`` (the rest is only counted), is echoed cut to
that, and goes into the output tail cut to ``LINE_KEEP_BYTES``; the tail keeps
the last ``TAIL_LINES`` lines and never more than ``TAIL_BYTES`` of them.
Every cut line says how much was cut.
"""

from __future__ import annotations

import codecs
import sys
import threading
from collections import deque
from pathlib import Path
from typing import IO, Callable

from ..markdown_text import inert
from ..text_bounds import LINE_ECHO_BYTES, LINE_KEEP_BYTES, TAIL_BYTES, TAIL_LINES, cut_marker

Echo = Callable[[str], None]

_CONSOLE_LOCK = threading.Lock()


def terminal_safe(text: str) -> str:
    """``text`` as a terminal should show it: colour codes kept, other escapes and controls written out (``\\x1b``).

    Colours pass; every other control character is shown, not obeyed: an OSC sequence retitles the terminal,
    writes its clipboard (OSC 52) or hides a link, a CSI one moves the cursor or clears the screen over the kit's
    own lines (`kit.markdown_text.inert`, the one rule).
    """
    return inert(text, colours=True)


def echo_to_console(line: str) -> None:
    """One whole line to the kit's stdout, terminal-safe (a lock keeps lines of several children apart)."""
    line = terminal_safe(line)
    with _CONSOLE_LOCK:
        sys.stdout.write(line + "\n")
        sys.stdout.flush()


class OutputLog:
    """An echo that appends each line to a log file (a probe's log, an explained program's output) and, with
    ``console``, shows it too.

    A log that cannot take a line (its folder full, ``TMPDIR`` on a small tmpfs) must not stop the pipe being
    read: the child would block on its next write and hang to its timeout. So a refused line is counted, not
    raised, and whatever fits later is still written.
    """

    def __init__(self, handle: IO[str] | None, console: bool, error: str = "") -> None:
        self.handle, self.console = handle, console
        self.lost_lines = self.lost_bytes = 0
        self.error = error

    @classmethod
    def opened(cls, path: Path, console: bool) -> OutputLog:
        """The log at ``path``, appended to; one that cannot even be made counts every line lost."""
        try:
            return cls(open(path, "a", encoding="utf-8"), console)
        except OSError as error:
            return cls(None, console, error.strerror or str(error))

    def close(self) -> None:
        if self.handle is None:
            return
        try:
            self.handle.close()
        except OSError as error:  # what was still buffered is lost with it
            self.error = self.error or (error.strerror or str(error))

    def __call__(self, line: str) -> None:
        if self.console:
            echo_to_console(line)
        try:
            if self.handle is None:
                raise OSError(self.error)
            self.handle.write(line + "\n")
            self.handle.flush()
        except OSError as error:
            self.lost_lines += 1
            self.lost_bytes += len(line.encode("utf-8", "replace")) + 1
            self.error = self.error or (error.strerror or str(error))

    def sentence(self, path: object) -> str:
        """What was not kept, or "" when every line was."""
        if not self.lost_lines:
            return ""
        return (f"the output log {path} could not take {self.lost_lines} line(s) ({self.lost_bytes} bytes) of the "
                f"output ({self.error}): they were read and dropped, so the run went on; the output tail is kept")


class Tail:
    """The last lines of output, bounded in lines and in bytes; shared by the children of one run."""

    def __init__(self, max_lines: int = TAIL_LINES, max_bytes: int = TAIL_BYTES) -> None:
        self.max_bytes = max_bytes
        self._lines: deque[str] = deque(maxlen=max_lines)
        self._lock = threading.Lock()

    def add(self, line: str) -> None:
        with self._lock:
            self._lines.append(line)
            while len(self._lines) > 1 and sum(len(x.encode("utf-8", "replace")) for x in self._lines) > self.max_bytes:
                self._lines.popleft()

    def lines(self) -> list[str]:
        with self._lock:
            return list(self._lines)


def _head(data: bytes, limit: int, whole: bool) -> tuple[str, int]:
    """The first ``limit`` bytes as text, and how many bytes at its end were held back.

    Unless ``data`` is the whole line, a character split by the limit is left
    out (and counted as cut), not garbled into a replacement character: the
    line may be whole here yet already cut while it was read.
    """
    decoder = codecs.getincrementaldecoder("utf-8")("replace")
    text = decoder.decode(data[:limit], final=whole)
    return text, len(decoder.getstate()[0])


class Lines:
    """Turns chunks of one child's output into bounded lines, echoed and kept as they end."""

    def __init__(self, tail: Tail, prefix: str = "", echo: Echo | None = echo_to_console) -> None:
        self.tail, self.prefix, self.echo = tail, prefix, echo
        self._head = bytearray()
        self._dropped = 0
        self._keep = max(LINE_ECHO_BYTES, LINE_KEEP_BYTES)

    def feed(self, chunk: bytes) -> None:
        """Add a chunk read from the pipe; every line it completes is echoed and kept."""
        start = 0
        while start < len(chunk):
            end = chunk.find(b"\n", start)
            piece = chunk[start:] if end < 0 else chunk[start:end]
            room = self._keep - len(self._head)
            self._head += piece[:max(room, 0)]
            self._dropped += max(len(piece) - max(room, 0), 0)
            if end < 0:
                return
            self._emit()
            start = end + 1

    def close(self) -> None:
        """The output ended: a last line without a newline still counts."""
        if self._head or self._dropped:
            self._emit()

    def _emit(self) -> None:
        data, dropped = bytes(self._head).rstrip(b"\r"), self._dropped
        self._head.clear()
        self._dropped = 0
        if self.echo is not None:
            self.echo(self.prefix + self._bounded(data, dropped, LINE_ECHO_BYTES))
        self.tail.add(self.prefix + self._bounded(data, dropped, LINE_KEEP_BYTES).rstrip())

    @staticmethod
    def _bounded(data: bytes, dropped: int, limit: int) -> str:
        removed = dropped + max(len(data) - limit, 0)
        text, held = _head(data, limit, whole=not removed)
        return text + (cut_marker(removed + held) if removed else "")
