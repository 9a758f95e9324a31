"""Where JAX's history comes from: a clone the user names, or one the kit keeps.

In order: ``--jax-repo PATH``, then ``[install] jax_repo`` in matrix.toml,
else a clone the kit makes once under ``.nox/jax-history/`` (bare, partial:
commits and trees up front, file contents fetched only for the commits a
bisect lays over an environment). A user's clone is only read (a partial one
gets the contents of the commits laid over, as git does on any read); the
kit's own clone fetches a tag it lacks (a release newer than the clone) when asked.

No clone and the remote unreachable is :class:`~kit.errors.HistoryUnreachable`
(exit 4, nothing ran, no record): as with an unreachable package index, an
outage says nothing about JAX.
"""

from __future__ import annotations

import os
import shutil
import urllib.parse
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from ..log_events import Log
from ..errors import HistoryUnreachable, UsageError
from .git import GitFailed, git, looks_like_network


JAX_REMOTE = "https://github.com/jax-ml/jax.git"
"""Where the kit's own clone comes from (tests point it at a ``file://`` repository)."""

CLONE_TIMEOUT_S = 1800.0  # JAX's commits and trees without file contents: a few hundred MB at most
FETCH_TIMEOUT_S = 300.0


@dataclass(frozen=True)
class History:
    """A clone of JAX the kit may read, and where it came from (for the report)."""

    path: Path
    origin: str
    """``--jax-repo``, ``matrix.toml [install] jax_repo`` or ``the kit's clone of <url>``."""
    remote: str | None = None
    """The kit's own clone fetches what it lacks from here; None for a user's clone (read only)."""


def open_history(given: Path | None, given_by: str, cache: Path, log: Log,
                 remote: str | None = None, shown: str | None = None) -> History:
    """The clone to read: ``given`` (checked), else the kit's clone under ``cache``, made now if need be.

    ``shown`` is how reports name the clone used (a path relative to the project, or as the user gave it).
    """
    if given is not None:
        path = _checked_clone(given, given_by)
        return History(path, f"{shown or path} ({given_by})")
    remote = remote or JAX_REMOTE
    origin = f"the kit's clone of {remote} in {shown or cache}"
    if _is_git_dir(cache):
        return History(cache, origin, remote)
    _clone(remote, cache, log)
    return History(cache, origin, remote)


def _checked_clone(path: Path, given_by: str) -> Path:
    path = path.expanduser().resolve()
    if not path.exists():
        raise UsageError(f"{given_by} {path} does not exist", "give the path of a clone of https://github.com/jax-ml/jax")
    if not _is_git_dir(path):
        raise UsageError(f"{given_by} {path} is not a git clone",
                         "clone JAX first: git clone --filter=blob:none https://github.com/jax-ml/jax")
    if not git(path, "for-each-ref", "--count=1", "--format=%(refname)", "refs/tags/jax-v*", timeout=30).strip():
        # Said before any release is probed: an empty or other repository would only fail after them.
        raise UsageError(f"{given_by} {path} has no jax-vX.Y.Z tag: it is not a clone of JAX, or its tags were "
                         "never fetched",
                         f"fetch them (git -C {path} fetch --tags https://github.com/jax-ml/jax) or point "
                         f"{given_by} at a clone of JAX: git clone --filter=blob:none https://github.com/jax-ml/jax")
    return path


def _is_git_dir(path: Path) -> bool:
    if not path.is_dir():
        return False
    try:
        git(path, "rev-parse", "--git-dir", timeout=30)
    except GitFailed:
        return False
    return True


def _clone(remote: str, cache: Path, log: Log) -> None:
    """A bare partial clone into ``cache``, made beside it and moved in (two bisects may race; one wins)."""
    cache.parent.mkdir(parents=True, exist_ok=True)
    partial = cache.with_name(f"{cache.name}.{os.getpid()}.partial")
    shutil.rmtree(partial, ignore_errors=True)
    log(f"cloning JAX's history from {remote} into {cache} (once; commits and trees, no file contents)")
    try:
        git(None, "clone", "--quiet", "--bare", "--filter=blob:none", remote, str(partial), timeout=CLONE_TIMEOUT_S)
        # A bare clone maps branches 1:1; give it the usual remote-tracking refspec so later fetches work.
        git(partial, "config", "remote.origin.fetch", "+refs/heads/*:refs/remotes/origin/*")
    except GitFailed as exc:
        shutil.rmtree(partial, ignore_errors=True)
        if looks_like_network(exc):
            raise unreachable(remote, exc) from None
        raise UsageError(f"cloning JAX's history from {remote} failed: {exc.last}",
                         "pass --jax-repo PATH to a clone of https://github.com/jax-ml/jax") from None
    try:
        os.rename(partial, cache)
    except OSError:
        shutil.rmtree(partial, ignore_errors=True)  # another bisect finished its clone first: use that one
        if not _is_git_dir(cache):
            raise


def unreachable(remote: str, exc: GitFailed) -> HistoryUnreachable:
    """The one sentence for "no clone here and the remote is down", naming --jax-repo."""
    host = urllib.parse.urlsplit(remote).netloc or remote
    return HistoryUnreachable(
        f"--commits needs JAX's git history: there is no clone here and {host} could not be reached ({exc.last}); "
        "pass --jax-repo PATH to a clone of https://github.com/jax-ml/jax",
        "any clone works, even one without file contents: git clone --filter=blob:none https://github.com/jax-ml/jax",
    )


def has_tag(history: History, tag: str) -> bool:
    try:
        git(history.path, "rev-parse", "--quiet", "--verify", f"refs/tags/{tag}^{{commit}}", timeout=30)
    except GitFailed:
        return False
    return True


def ensure_tags(history: History, tags: Sequence[str], log: Log) -> None:
    """Every tag present: fetched into the kit's clone, or a UsageError naming the update for a user's clone."""
    missing = [tag for tag in tags if not has_tag(history, tag)]
    if not missing:
        return
    if history.remote is None:
        raise UsageError(f"the clone {history.origin} has no tag {', '.join(missing)}",
                         f"update it: git -C {history.path} fetch --tags origin")
    log(f"fetching {', '.join(missing)} into {history.path}")
    try:
        git(history.path, "fetch", "--quiet", "--filter=blob:none", "origin",
            *(f"refs/tags/{tag}:refs/tags/{tag}" for tag in missing), timeout=FETCH_TIMEOUT_S)
    except GitFailed as exc:
        if looks_like_network(exc):
            raise unreachable(history.remote, exc) from None
        raise UsageError(f"{history.remote} has no tag {', '.join(missing)}: {exc.last}",
                         "check the release numbers: tags are named jax-vX.Y.Z") from None
