"""A commit's files written into a folder: what an overlay is made of.

``git archive`` would do, but in a clone without file contents it stops on
the first absent file (JAX's tree has large images) and it writes
everything. Here the caller says which paths it wants, their contents are
fetched in ONE request when the clone is partial (git's own lazy fetch would
ask once per file: hundreds of round trips), and one ``cat-file --batch``
process writes them out.
"""

from __future__ import annotations

import errno
import os
from pathlib import Path
from typing import Callable, Sequence

from ..errors import OverlayUnwritable, UsageError
from .git import GitFailed, git, git_bytes, looks_like_network
from .source import FETCH_TIMEOUT_S, History, unreachable

_SYMLINK, _EXECUTABLE = "120000", "100755"


def export_files(history: History, commit: str, roots: Sequence[str], folder: Path,
                 wanted: Callable[[str], bool] = lambda path: True) -> list[str]:
    """Write the files under ``roots`` at ``commit`` that ``wanted`` accepts into ``folder``; their paths."""
    entries = _tree_entries(history, commit, roots)
    chosen = [(mode, oid, path) for mode, kind, oid, path in entries if kind == "blob" and wanted(path)]
    fetch_missing(history, commit, roots, {oid for _mode, oid, _path in chosen})
    contents = _read_blobs(history, [oid for _mode, oid, _path in chosen])
    try:
        for mode, oid, path in chosen:
            _write(folder / path, mode, contents[oid])
    except OSError as error:
        raise _unwritable(commit, folder, error) from None
    return [path for _mode, _oid, path in chosen]


OVERLAY_ROOM = "about 15 MB"
"""What one commit's overlay takes on disk (JAX's Python and jaxlib's), for the sentence when it does not fit."""


def _write(target: Path, mode: str, content: bytes) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    if mode == _SYMLINK:
        os.symlink(content.decode("utf-8"), target)
        return
    target.write_bytes(content)
    if mode == _EXECUTABLE:
        target.chmod(0o755)


def _unwritable(commit: str, folder: Path, error: OSError) -> OverlayUnwritable:
    """One sentence naming the folder, and the room an overlay needs when the disk is full; TMPDIR as the fix."""
    full = error.errno in (errno.ENOSPC, errno.EDQUOT)
    need = f"; an overlay needs {OVERLAY_ROOM} free there" if full else ""
    return OverlayUnwritable(
        f"could not lay commit {commit[:10]}'s files out in {folder} ({error.strerror or error}){need}",
        f"{'free some space in' if full else 'make writable'} {folder.parent}, or set TMPDIR to a folder with "
        f"room for it (the overlays go there): TMPDIR=/path/with/room nox -s bisect -- ...")


def _tree_entries(history: History, commit: str, roots: Sequence[str]) -> list[tuple[str, str, str, str]]:
    out = git(history.path, "ls-tree", "-r", "-z", commit, "--", *roots)
    entries = []
    for item in filter(None, out.split("\0")):
        meta, path = item.split("\t", 1)
        mode, kind, oid = meta.split()
        entries.append((mode, kind, oid, path))
    return entries


def is_partial(history: History) -> str | None:
    """The promisor remote of a partial clone (contents fetched on demand); None for a full clone.

    ``clone --filter`` marks it ``remote.<name>.promisor = true`` (older gits
    wrote ``extensions.partialclone = <name>``).
    """
    for key in ("extensions.partialclone", r"^remote\..*\.promisor$"):
        try:
            out = git(history.path, "config", "--get-regexp", key).split()
        except GitFailed:
            continue  # not set
        if key.startswith("extensions") and len(out) > 1:
            return out[1]
        if len(out) > 1 and out[1] == "true":
            return out[0][len("remote."):-len(".promisor")]
    return None


def fetch_missing(history: History, commit: str, roots: Sequence[str], oids: set[str]) -> None:
    """Fetch the absent contents among ``oids`` in one request (partial clones only)."""
    remote = is_partial(history)
    if remote is None or not oids:
        return
    listed = git(history.path, "rev-list", "--objects", "--no-object-names", "--missing=print",
                 *(f"{commit}:{root}" for root in roots))
    missing = sorted({line[1:] for line in listed.splitlines() if line.startswith("?")} & oids)
    if not missing:
        return
    try:
        git(history.path, "-c", "fetch.negotiationAlgorithm=noop", "fetch", "--quiet", "--no-tags",
            "--no-write-fetch-head", "--recurse-submodules=no", "--filter=blob:none", "--stdin", remote,
            stdin="\n".join(missing).encode() + b"\n", timeout=FETCH_TIMEOUT_S)
    except GitFailed as exc:
        if looks_like_network(exc):
            raise unreachable(history.remote or remote, exc) from None
        raise


def _read_blobs(history: History, oids: Sequence[str]) -> dict[str, bytes]:
    """Every blob's bytes, from one ``cat-file --batch``; a UsageError naming one that the clone lacks."""
    distinct = list(dict.fromkeys(oids))
    if not distinct:
        return {}
    out = git_bytes(history.path, "cat-file", "--batch", stdin="\n".join(distinct).encode() + b"\n")
    contents: dict[str, bytes] = {}
    at = 0
    for oid in distinct:
        end = out.index(b"\n", at)
        header = out[at:end].decode()
        if header.endswith(" missing"):
            raise UsageError(f"the clone {history.path} lacks the contents of object {oid}",
                             "use a clone that has JAX's files (or a partial clone that can still fetch them)")
        size = int(header.split()[2])
        contents[oid] = out[end + 1:end + 1 + size]
        at = end + 1 + size + 1
    return contents
