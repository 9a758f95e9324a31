"""The few errors a user can meet, each one sentence plus a tip.

Low-level failures (a bad TOML line, a refused download) are translated into
these at the boundary, so the command line prints one ``ERROR`` line and a
``TIP`` instead of a traceback.
"""

from __future__ import annotations

import errno
import os
import re
from pathlib import Path

from .exit_codes import EXIT_FAILED, EXIT_NETWORK, EXIT_USAGE


class KitError(Exception):
    """Something the user can fix; ``tip`` says how."""

    exit_code = EXIT_USAGE  # bad input, unless a subclass says otherwise

    def __init__(self, message: str, tip: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.tip = tip

    def __str__(self) -> str:
        return self.message

    def render(self) -> str:
        lines = [f"ERROR: {self.message}"]
        if self.tip:
            lines.append(f"TIP: {self.tip}")
        return "\n".join(lines)


class ConfigError(KitError):
    """matrix.toml (or a command-line override of it) is wrong."""


class PackageIndexError(KitError):
    """The package index could not be read (network, bad URL)."""


class IndexUnreachable(PackageIndexError):
    """The network stood between us and the index: nothing is known about the release.

    Never a property of the release, so it becomes no record (a record would
    read as "not installable" in the matrix); the command exits 4, whoever catches it.
    """

    exit_code = EXIT_NETWORK


class ArchiveUnreachable(IndexUnreachable):
    """The index answered and lacks the release's jaxlib; only JAX's archive of pruned jaxlibs, out of reach, might have it.

    Still nothing known about that one release, but the index is fine: a
    bisect skips the release with this sentence and goes on with the others.
    """


class UsageError(KitError):
    """A bad command-line argument."""


class StorageError(KitError):
    """A file could not be written (disk full, read-only folder); nothing measured is lost."""

    exit_code = EXIT_FAILED
    stops = "a record could not be kept"
    """What stopped a sweep, in its closing line (every later cell would meet the same)."""
    cell_status = "unsaved"
    """The closing table's status for the cell it stopped at."""


class OverlayUnwritable(StorageError):
    """A commit's files could not be laid out in the overlay's folder (a full or read-only temp folder).

    Nothing about the commit: the folder is named with the room an overlay needs, and TMPDIR is the fix.
    """


class HistoryUnreachable(KitError):
    """JAX's git history is needed, no clone is at hand and its remote cannot be reached.

    Like an unreachable index, an outage says nothing about JAX: exit 4, no record.
    """

    exit_code = EXIT_NETWORK


class MachineUnwritable(StorageError):
    """A folder this machine gives the install could not be written (no space, read-only, no permission).

    uv's cache or the environment being built: nothing about the release, so no record; the folder is
    named with what sets it (`kit.install.uv_failures`). Exit 1, as for a record that could not be kept,
    and a sweep stops there too.
    """

    stops = "this machine could not build an environment"
    cell_status = "error"


class OutOfFiles(KitError):
    """The kit ran out of file descriptors (``ulimit -n``, or the system's table): no fact about what it ran.

    A check that could not be started, a result file that could not be opened, is no verdict and no
    crash of the release: the run stops with one sentence, exit 1 (`out_of_files`).
    """

    exit_code = EXIT_FAILED


def out_of_files(exc: BaseException) -> OutOfFiles | None:
    """`OutOfFiles` for an `OSError` of too many open files (EMFILE, ENFILE); None for any other error."""
    if not isinstance(exc, OSError) or exc.errno not in (errno.EMFILE, errno.ENFILE):
        return None
    tip = "raise the limit (ulimit -n 4096) or run fewer probes at once (--jobs 1), then run the same command again"
    if exc.errno == errno.ENFILE:
        return OutOfFiles("this machine's table of open files is full (Too many open files in system): the kit "
                          "stopped where it needed one, and that run recorded nothing", tip)
    return OutOfFiles(f"the kit ran out of file descriptors ({_descriptor_limit()}): this machine's limit, not a "
                      "result, so the run that needed one recorded nothing", tip)


def _descriptor_limit() -> str:
    try:
        import resource
    except ImportError:  # pragma: no cover - not Unix
        return "Too many open files"
    soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    return f"Too many open files: its limit, ulimit -n, is {soft}"


_UNWRITABLE = {errno.ENOSPC: "free some space in {}", errno.EDQUOT: "free some space in {}",
               errno.EROFS: "make {} writable", errno.EACCES: "let this user read and write {}"}


_REFUSED_WRITE = re.compile(r"\[Errno (\d+)\] (No space left on device|Disk quota exceeded|Read-only file system)")


def child_refused_write(last_line: str, folder: Path) -> MachineUnwritable | None:
    """`MachineUnwritable` when a child of the kit's (a repro) died of a write this machine refused, as its
    traceback's last line says (``OSError: [Errno 28] No space left on device``); None for any other end.

    A full TMPDIR, where the repro writes its result, is no crash of the release: no record blames it.
    """
    refused = _REFUSED_WRITE.search(last_line)
    if refused is None:
        return None
    import tempfile

    tip = _UNWRITABLE.get(int(refused[1]), "free some space in {}").format(tempfile.gettempdir())
    return MachineUnwritable(f"the repro could not write ({refused[2]}), its result going to {folder}: this "
                             "machine's fault, not the release's, so no record was kept",
                             f"{tip} (TMPDIR) and in the kit's cache, then run the same command again")


def unusable_file(exc: BaseException) -> MachineUnwritable | None:
    """`MachineUnwritable` for an `OSError` that this machine refused on a named file (no space, read-only, no
    permission), wherever the kit met it (its index cache, a lock, a temp file); None for any other error.

    The command line's last resort: one sentence naming the file, exit 1, instead of a traceback.
    """
    if isinstance(exc, IsADirectoryError) and exc.filename:  # a folder where the kit writes one of its files
        named = os.fsdecode(exc.filename)
        return MachineUnwritable(f"{named} is a folder, where the kit writes a file: nothing was written there, and "
                                 "no file beside it was changed", f"move that folder away, then run the same command "
                                 "again")
    if not isinstance(exc, OSError) or exc.errno not in _UNWRITABLE:
        return None
    if not exc.filename:  # a write to a file already open (a log in TMPDIR, a record half written): no name given
        import tempfile

        return MachineUnwritable(f"this machine refused one of the kit's writes ({exc.strerror}): its fault, not a "
                                 "result, so the run that needed it recorded nothing",
                                 f"{_UNWRITABLE[exc.errno].format(tempfile.gettempdir())} (TMPDIR) and in the "
                                 "project's reports folder, then run the same command again")
    where = os.path.dirname(os.path.abspath(os.fsdecode(exc.filename)))
    return MachineUnwritable(f"the kit could not use {os.fsdecode(exc.filename)} ({exc.strerror}): this machine's "
                             "fault, not a result, so the run that needed it recorded nothing",
                             _UNWRITABLE[exc.errno].format(where) + ", then run the same command again")
