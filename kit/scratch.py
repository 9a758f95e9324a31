"""The kit's scratch folders: made by the kit, in one folder of its own, and removed only by the kit.

A run's result file, a program's HLO dump and a commit's overlay each need a
private folder in the temp folder. Each is a `tempfile.mkdtemp` inside
``<TMPDIR>/jax-kit-<uid>/`` (made with mode 0700; refused when it is a link,
another user's, or open to other users), and holds a lock file that the kit
keeps locked (``flock``) while the folder is in use. A kit killed outright
leaves its folder, and the system releases its lock; the next kit removes the
folders whose lock it can take. Nothing else is ever removed: not a folder
without the lock file, not anything outside the kit's own folder.

A pid is no mark of ownership: the kit once removed every ``kit-<digits>-*``
folder of the user's whose "pid" was not alive, so a user's
``kit-2024-my-notes/`` went, and two kits in different PID namespaces sharing
a TMPDIR (containers, nodes with a shared scratch) removed each other's live
folders. A lock is held by a process wherever its pid is counted.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import stat
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from .errors import StorageError

ROOT_PREFIX = "jax-kit-"
LOCK_NAME = ".jax-kit-scratch.lock"
"""The kit's mark in each scratch folder, locked while the folder is in use: only a folder holding it is removed."""

_HELD: dict[Path, int] = {}
"""This process's scratch folders and their lock's file descriptor (closing it releases the lock)."""


class ScratchRefused(StorageError):
    """The kit's own folder in the temp folder cannot be trusted or made (a link, another user's, a full disk)."""


def root() -> Path:
    """``<TMPDIR>/jax-kit-<uid>``, made with mode 0700 if missing; `ScratchRefused` unless it is this user's own.

    An OSError where it cannot be made (a full or read-only temp folder) is left to the caller, who knows what
    the folder was for.
    """
    base = Path(tempfile.gettempdir())
    path = base / f"{ROOT_PREFIX}{os.getuid()}"
    try:
        os.mkdir(path, 0o700)  # a full or read-only temp folder: the OSError is the caller's to word
    except FileExistsError:
        pass
    _trust(path)
    return path


def _trust(path: Path) -> None:
    """Refuse ``path`` unless it is a real folder of this user's that nobody else can write or read."""
    found = os.lstat(path)
    why = ("is a symbolic link" if stat.S_ISLNK(found.st_mode) else
           "is not a folder" if not stat.S_ISDIR(found.st_mode) else
           f"belongs to another user (uid {found.st_uid})" if found.st_uid != os.getuid() else
           f"is open to other users (mode {stat.S_IMODE(found.st_mode):o})" if found.st_mode & 0o077 else "")
    if why:
        raise ScratchRefused(
            f"the kit's scratch folder {path} {why}: the kit makes it itself, with mode 700, so someone or something "
            "else put it there, and nothing was written into it",
            f"look at what it is, remove it (rm -r {path}) if it is nothing of yours, or set TMPDIR to a folder of "
            "your own: TMPDIR=~/tmp")


def make(kind: str) -> Path:
    """A new scratch folder ``<root>/<kind>-XXXXXXXX``, locked until `remove`; folders of dead kits removed first."""
    home = root()
    remove_abandoned(home)
    folder = Path(tempfile.mkdtemp(prefix=f"{kind}-", dir=home))
    _HELD[folder] = _lock(folder)
    return folder


def _lock(folder: Path) -> int:
    """Lock a new file, then give it the mark's name: a mark is never seen unlocked while its folder is in use."""
    part = folder / (LOCK_NAME + ".part")
    fd = os.open(part, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    fcntl.flock(fd, fcntl.LOCK_EX)
    os.rename(part, folder / LOCK_NAME)
    return fd


def remove(folder: Path) -> None:
    """Remove one of this process's scratch folders, then release its lock (a folder it did not make: untouched)."""
    fd = _HELD.pop(folder, None)
    if fd is None:
        return
    try:
        shutil.rmtree(folder, ignore_errors=True)
    finally:
        os.close(fd)


@contextmanager
def folder(kind: str) -> Iterator[Path]:
    """`make`, removed when the block ends (a SIGTERM unwinds through here too: `cli.unwind_on_stop_signals`)."""
    path = make(kind)
    try:
        yield path
    finally:
        remove(path)


def remove_abandoned(home: Path) -> list[Path]:
    """Remove the scratch folders in ``home`` whose lock nobody holds (their kit was killed); return them.

    A folder without the kit's lock file is not the kit's (or is being made):
    it stays, whatever its name.
    """
    removed = []
    for entry in os.scandir(home):
        path = Path(entry.path)
        if path in _HELD or not entry.is_dir(follow_symlinks=False):
            continue
        try:
            fd = os.open(path / LOCK_NAME, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
        except OSError:
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)  # held: a kit at work, in this namespace or another
            continue
        try:
            shutil.rmtree(path, ignore_errors=True)  # under its lock, so no other kit removes it at the same time
            removed.append(path)
        finally:
            os.close(fd)
    return removed
