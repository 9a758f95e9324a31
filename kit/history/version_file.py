"""``jax/version.py`` at a commit: which jaxlib builds that commit's Python accepts.

jax refuses, when it is imported, a jaxlib older than ``_minimum_jaxlib_version``
or newer than its own version (``_version``; ``__version__`` before 0.4.14),
comparing the dotted numeric prefixes (``jax/_src/lib/__init__.py``,
``check_jaxlib_version``). :class:`JaxlibRange` is that rule, read from the
file at each commit, so the kit picks a build the commit will import with
instead of finding out from a crash.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Mapping, Sequence

from .git import GitFailed, git, git_bytes
from .source import History

VERSION_FILE = "jax/version.py"

_ASSIGN = r"^{name}\s*(?::[^=]*)?=\s*['\"]([^'\"]+)['\"]"
_VERSION = re.compile(_ASSIGN.format(name="_version"), re.MULTILINE)
_OLD_VERSION = re.compile(_ASSIGN.format(name="__version__"), re.MULTILINE)
_MINIMUM = re.compile(_ASSIGN.format(name="_minimum_jaxlib_version"), re.MULTILINE)
_DOTTED = re.compile(r"[0-9]+(?:\.[0-9]+)*")


def dotted(version: str) -> tuple[int, ...]:
    """The numeric prefix jax compares: ``0.5.2.dev20250227`` → (0, 5, 2)."""
    match = _DOTTED.match(version)
    return tuple(int(part) for part in match.group(0).split(".")) if match else ()


@dataclass(frozen=True)
class JaxlibRange:
    """The jaxlib versions a commit's jax imports with: ``minimum <= jaxlib <= jax``."""

    minimum: str
    jax: str
    """The commit's own version (``_version``), also the newest jaxlib it accepts."""

    def accepts(self, jaxlib: str) -> bool:
        return dotted(self.minimum) <= dotted(jaxlib) <= dotted(self.jax)

    def __str__(self) -> str:
        return f"jaxlib >= {self.minimum} and <= {self.jax}"


def parse_version_file(text: str) -> JaxlibRange | None:
    """The range a ``jax/version.py`` declares; None when it declares neither version (not JAX's file)."""
    version = _VERSION.search(text) or _OLD_VERSION.search(text)
    minimum = _MINIMUM.search(text)
    if version is None or minimum is None:
        return None
    return JaxlibRange(minimum.group(1), version.group(1))


def jaxlib_ranges(history: History, commits: Sequence[str]) -> dict[str, JaxlibRange | None]:
    """Each commit's :class:`JaxlibRange` (None where its version.py is missing or unreadable).

    One ``rev-parse`` names every commit's version.py blob (trees only, no
    file contents), then each distinct blob is read once: the file changes a
    few times per release, so hundreds of commits cost a handful of reads.
    """
    if not commits:
        return {}
    blobs = _blob_ids(history, commits)
    ranges: dict[str, JaxlibRange | None] = {}
    for blob in set(blobs.values()):
        try:
            text = git_bytes(history.path, "cat-file", "blob", blob).decode("utf-8", errors="replace")
        except GitFailed:
            ranges[blob] = None
            continue
        ranges[blob] = parse_version_file(text)
    return {commit: ranges.get(blobs.get(commit, ""), None) for commit in commits}


def _blob_ids(history: History, commits: Sequence[str]) -> Mapping[str, str]:
    try:
        out = git(history.path, "rev-parse", *(f"{commit}:{VERSION_FILE}" for commit in commits))
        return dict(zip(commits, out.split()))
    except GitFailed:
        return _blob_ids_one_by_one(history, commits)  # some commit lacks the file: find which


def _blob_ids_one_by_one(history: History, commits: Sequence[str]) -> Mapping[str, str]:
    found: dict[str, str] = {}
    for commit in commits:
        try:
            found[commit] = git(history.path, "rev-parse", f"{commit}:{VERSION_FILE}").strip()
        except GitFailed:
            continue
    return found
