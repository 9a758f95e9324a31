"""Write files so that a crash or a full disk never leaves half of one.

Each file goes to a temp file in the same folder, is fsynced, and is then
moved over the old one with ``os.replace``; several files meant to agree
(matrix.md and matrix.json) are all written before any is moved, and the
moves are listed first, so that a kill between two of them is finished by the
next write into that folder. Files get the mode the umask gives, not mkstemp's
0600.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path

from .markdown_text import inert

TEMP_PREFIX = ".tmp-"
"""Temp files start with this (and end in ``.part``); readers of a folder skip them, git ignores them."""

ABANDONED_AFTER_S = 3600.0
"""A temp file this old is a killed writer's (a write takes milliseconds): the next write into its folder removes it.
By age, not by pid: a results folder on a shared file system is written by several machines."""


def atomic_write_text(path: Path, text: str) -> None:
    """Replace ``path`` with ``text`` (UTF-8) atomically (for reports, caches, markers; not records)."""
    atomic_write_texts({Path(path): text})


def atomic_write_bytes(path: Path, data: bytes) -> None:
    """Replace ``path`` with ``data`` atomically (a PNG, say)."""
    atomic_write_texts({Path(path): data})


def atomic_write_texts(files: Mapping[Path, str | bytes]) -> None:
    """Replace several files together or not at all (as far as a file system allows).

    Every temp file is written and fsynced before the first one is moved into
    place, so a full disk or a crash while writing leaves all the old files
    as they were; the moves themselves need no space. Files get the mode the
    umask gives (mkstemp's 0600 would hide reports from other users). Text is
    written as UTF-8, bytes as they are; a markdown file's text made inert
    (`kit.markdown_text.inert`: a record's escape sequence is written out).
    """
    for path in files:  # checked before any is written: a folder in the way must not leave half of a pair moved
        if Path(path).is_dir():
            raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), str(path))
    temps: dict[Path, str] = {}
    journal: str | None = None
    try:
        for path, content in files.items():
            path = Path(path)
            if isinstance(content, str) and path.suffix == ".md":  # read in terminals (cat) as well as browsers
                content = inert(content)
            path.parent.mkdir(parents=True, exist_ok=True)
            fd, temp_name = tempfile.mkstemp(dir=path.parent, prefix=TEMP_PREFIX, suffix=".part")
            temps[path] = temp_name
            with os.fdopen(fd, "wb") as handle:
                # A name the C locale could not decode (a non-ASCII folder) holds surrogates: its own bytes again.
                handle.write(content.encode("utf-8", "surrogateescape") if isinstance(content, str) else content)
                handle.flush()
                os.fchmod(handle.fileno(), 0o666 & ~file_mode_mask())
                os.fsync(handle.fileno())
        folders = {Path(path).parent for path in files}
        for folder in folders:
            finish_interrupted_moves(folder)  # before ours: an older pair must not land over what is written now
        journal = _journal(temps) if len(temps) > 1 else None
        for path, temp_name in temps.items():
            os.replace(temp_name, path)
        for folder in folders:
            remove_abandoned_temps(folder)
    finally:
        for temp_name in [*temps.values(), *([journal] if journal else [])]:  # nothing of ours stays behind
            with contextlib.suppress(FileNotFoundError):
                os.unlink(temp_name)


JOURNAL_SUFFIX = ".moves.part"
INTERRUPTED_AFTER_S = 60.0
"""A list of moves this old is a killed writer's (its moves take microseconds): the next write there finishes it."""


def _journal(temps: Mapping[Path, str]) -> str:
    """Write down the moves about to be made, fsynced, beside the first file: a kill between two moves (matrix.md
    new, matrix.json old) is then finished by the next write into that folder instead of staying half done."""
    folder = next(iter(temps)).parent
    fd, name = tempfile.mkstemp(dir=folder, prefix=TEMP_PREFIX, suffix=JOURNAL_SUFFIX)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        json.dump([[temp, str(path)] for path, temp in temps.items()], handle)
        handle.flush()
        os.fsync(handle.fileno())
    return name


def finish_interrupted_moves(folder: Path, now: float | None = None) -> list[Path]:
    """Make the moves a killed writer listed and did not make (each temp file still there); the files they reached."""
    now = time.time() if now is None else now
    finished: list[Path] = []
    for journal in Path(folder).glob(f"{TEMP_PREFIX}*{JOURNAL_SUFFIX}"):
        try:
            if now - journal.stat().st_mtime <= INTERRUPTED_AFTER_S:
                continue  # a writer at work
            moves = json.loads(journal.read_text(encoding="utf-8"))
            for temp, final in moves:
                if os.path.exists(temp):
                    os.replace(temp, final)
                    finished.append(Path(final))
            journal.unlink()
        except (OSError, ValueError, TypeError):
            continue  # a torn list (killed while writing it): no move was made, the temps go in an hour
    return finished


def file_mode_mask() -> int:
    """The process's umask, read without a window in which another thread sees it changed."""
    try:  # Linux says it without changing it (os.umask is process-wide, threads share it)
        for line in Path("/proc/self/status").read_text(encoding="utf-8").splitlines():
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    current = os.umask(0o022)
    os.umask(current)
    return current


def fsync_dir(folder: Path) -> None:
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def remove_abandoned_temps(folder: Path, now: float | None = None) -> list[Path]:
    """Remove the temp files in ``folder`` that writers killed mid-write left (older than `ABANDONED_AFTER_S`).

    A kill between the temp file and its move (during the fsync, say) left a
    ``.tmp-*.part`` for good, in ``git status`` among the records. Which were removed.
    """
    now = time.time() if now is None else now
    removed = []
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return []
    for entry in entries:
        if not (entry.name.startswith(TEMP_PREFIX) and entry.name.endswith(".part")):
            continue
        try:
            age = now - entry.stat(follow_symlinks=False).st_mtime
            if entry.is_file(follow_symlinks=False) and age > ABANDONED_AFTER_S:
                os.unlink(entry.path)
                removed.append(Path(entry.path))
        except OSError:
            continue  # another writer's cleanup got there first, or the folder is read-only: harmless
    return removed
