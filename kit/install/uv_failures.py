"""What a failed uv call says about this machine rather than about the release.

uv's refusal becomes a `not-installable` record only when it is the index's
answer ("no jaxlib 0.4.16 wheels"). Two kinds of failure are this machine's
and never a record (a record would flip the release's matrix cell):

* a download cut off mid-file (a dropped connection, a proxy that gives up:
  "error decoding response body", "peer closed connection"), or a server that
  failed to give a page or file (HTTP 5xx, or 429: too many requests): the
  network's, `IndexUnreachable`, exit 4, as for an index that does not answer;
* a folder uv could not write (its cache, or the environment being built):
  no space left, a read-only file system, no permission, a quota:
  `MachineUnwritable`, exit 1, naming the folder and what sets it
  (``UV_CACHE_DIR``, ``XDG_CACHE_HOME`` or ``HOME`` for uv's cache).

`raise_if_this_machine` is asked on every failed uv call (`plan._resolve`,
`envs._run`) before anything else reads its words.
"""

from __future__ import annotations

import errno
import os
import re
from pathlib import Path
from typing import Mapping

from ..errors import IndexUnreachable, MachineUnwritable
from .uv_cache import default_cache_dir

_CUT_OFF = re.compile(r"error decoding response body|end of file before message length reached|"
                      r"peer closed connection|connection reset|connection closed before message completed|"
                      r"unexpected eof|incomplete message|broken pipe", re.IGNORECASE)
"""uv's (reqwest's, hyper's, rustls') words for a connection that dropped while a file came down."""

_SERVER_FAILED = re.compile(r"HTTP status (?:server error \((5\d\d)|client error \((429))([^)]*)\) for url \(([^)\s]+)\)")
"""uv's words for a page or file that a server failed to give (5xx), or refused for now (429, too many requests)."""

_FAILED_DOWNLOAD = re.compile(r"Failed to (?:download|fetch)(?: and build)?:? `?([^`\s]+)`?")

_OS_ERROR = re.compile(r"(No space left on device|Read-only file system|Permission denied|Disk quota exceeded|"
                       r"File exists|Not a directory) \(os error (\d+)\)")
_FILE_IN_THE_WAY = {errno.EEXIST, errno.ENOTDIR}
"""uv making a folder where a file is (``UV_CACHE_DIR`` naming a file): said as that."""
WRITE_ERRNOS = {errno.ENOSPC, errno.EROFS, errno.EACCES, errno.EDQUOT}
"""The errors of a write this machine refused: no space, a read-only file system, no permission, a quota."""

SERVER_TIP = ("run the same command again later (nothing was recorded); if it keeps failing, check the index (or the "
              "proxy in between) and HTTPS_PROXY")

CUT_OFF_TIP = ("run the same command again (a cut download says nothing about the release, so nothing was "
               "recorded); if it keeps happening, check the network and HTTPS_PROXY")


def raise_if_this_machine(stderr: str, folder: Path | None = None, environ: Mapping[str, str] = os.environ) -> None:
    """`IndexUnreachable` for a cut download, `MachineUnwritable` for a folder uv could not write; else nothing.

    ``folder`` is the environment being built, when there is one: a path
    inside it is that folder's fault, and the folder above it is named.
    """
    written = _write_failure(stderr)
    if written is not None:
        words, where = written
        raise unwritable(words, where, folder, environ)
    failed = _SERVER_FAILED.search(stderr)
    if failed is not None:
        code, why, url = failed.group(1) or failed.group(2), failed.group(3).strip(), failed.group(4)
        raise IndexUnreachable(f"{url} answered uv with HTTP {code} ({why}): the server's failure says nothing about "
                               "the release", SERVER_TIP)
    cut = _CUT_OFF.search(stderr)
    if cut is not None:
        download = _FAILED_DOWNLOAD.search(stderr)
        what = f"while it downloaded {download.group(1)}" if download else "while a file came down"
        raise IndexUnreachable(f"uv's connection to the package index was cut off {what} "
                               f"({_last_cause(stderr)})", CUT_OFF_TIP)


def _write_failure(stderr: str) -> tuple[str, Path | None] | None:
    """The OS's words for a write that failed, and the path it names, from uv's last such line; None if none."""
    for line in reversed(stderr.splitlines()):
        found = _OS_ERROR.search(line)
        if found is None or int(found.group(2)) not in WRITE_ERRNOS | _FILE_IN_THE_WAY:
            continue
        # uv names the path before the words ("failed to create directory `P`: ...") or after them
        # ("... (os error 30) at path \"P\"").
        before, after = line[:found.start()], line[found.end():]
        named = _paths(before)[-1:] or _paths(after)[:1]
        words = "a file is where a folder should be" if int(found.group(2)) in _FILE_IN_THE_WAY else found.group(1)
        return words, Path(named[0]) if named else None
    return None


def _paths(text: str) -> list[str]:
    quoted = re.findall(r"`([^`]+)`|\"([^\"]+)\"", text)
    return [a or b for a, b in quoted] or re.findall(r"(/[^\s:`\"]+)", text)


def unwritable(words: str, path: Path | None, folder: Path | None,
               environ: Mapping[str, str] = os.environ) -> MachineUnwritable:
    """The one sentence for a write that failed at ``path`` (uv's cache, the environment ``folder``, elsewhere)."""
    room = "space" in words or "quota" in words
    fix = "free some space there" if room else "move that file away" if "file is" in words else "make it writable"
    cache = _uv_cache(environ)
    if path is not None and cache is not None and _inside(path, cache):
        return MachineUnwritable(
            f"uv could not write its cache {cache} ({words}; {_cache_setting(environ)}): this is this machine's "
            "fault, not the release's, so nothing was recorded",
            f"{fix}, or point UV_CACHE_DIR at a folder you can write, with room "
            "(UV_CACHE_DIR=/path/with/room nox -s ...)")
    if folder is not None and (path is None or _inside(path, folder.parent)):  # the environment, its lock, its folder
        begun = path is None or _inside(path, folder)
        return MachineUnwritable(
            f"could not build the environment {folder.name} in {folder.parent} ({words}): "
            + ("the half-built environment was removed, and nothing was recorded" if begun else
               "nothing was built or recorded") + " (this machine's fault, not the release's)",
            f"{'free some space in' if room else 'make writable'} {folder.parent} (a release's environment takes "
            "0.3 to 1 GB), or move the environments with envs_dir under [kit] in matrix.toml; then run the same "
            "command again")
    where = _existing_parent(path) if path is not None else None
    return MachineUnwritable(
        f"uv could not write {path or 'a file it needed'} ({words}): this is this machine's fault, not the "
        "release's, so nothing was recorded",
        f"{'free some space' if room else 'make it writable'}{f' in {where}' if where else ''}, then run the "
        "same command again")


def _uv_cache(environ: Mapping[str, str]) -> Path | None:
    if environ.get("UV_CACHE_DIR"):
        return Path(os.path.abspath(environ["UV_CACHE_DIR"]))
    found = default_cache_dir(environ)
    if found is not None:
        return Path(os.path.abspath(found))
    home = environ.get("HOME")
    xdg = environ.get("XDG_CACHE_HOME") or (os.path.join(home, ".cache") if home else None)
    return Path(os.path.abspath(xdg)) / "uv" if xdg else None


def _cache_setting(environ: Mapping[str, str]) -> str:
    """Which variable put uv's cache where it is."""
    if environ.get("UV_CACHE_DIR"):
        return f"UV_CACHE_DIR={environ['UV_CACHE_DIR']}"
    if environ.get("XDG_CACHE_HOME"):
        return f"the cache XDG_CACHE_HOME={environ['XDG_CACHE_HOME']} puts there; UV_CACHE_DIR is not set"
    return f"the cache HOME={environ.get('HOME', '~')} puts there; UV_CACHE_DIR is not set"


def _inside(path: Path, folder: Path) -> bool:
    path, folder = Path(os.path.abspath(path)), Path(os.path.abspath(folder))
    return path == folder or folder in path.parents


def _existing_parent(path: Path) -> Path | None:
    for candidate in (path, *path.parents):
        if candidate.exists():
            return candidate
    return None


def _last_cause(stderr: str) -> str:
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    causes = [line[len("cause:"):].strip() for line in lines if line.startswith("cause:")]
    return (causes or lines or ["uv gave no reason"])[-1]
