"""A release branch's commit and its twin on JAX's main line, where its pull request and review live.

Patch releases are cut on branches: a fix found between two such tags is a
cherry-pick, with a hash no one on the issue tracker knows. Its twin on the
main line is found the way people find it: the message's ``(cherry picked
from commit X)``, the same ``PiperOrigin-RevId`` (copybara's stamp, kept
by a cherry-pick of an imported change), the same title, author and author
date (``git cherry-pick`` keeps the author and the author date, so this holds
for a pick without either stamp, even where the patch differs by context
lines or the twin came to main inside a merged pull request), or the same
title within half a year on main's first-parent line; a title alone is kept
only when the two patches are the same (``git patch-id``) or no patch can
be compared, and said so.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .commit_range import is_ancestor
from .version_file import dotted
from .git import GitFailed, git
from .source import History

_CHERRY = re.compile(r"\(cherry picked from commit ([0-9a-f]{7,40})\)")
_REV_ID = re.compile(r"^PiperOrigin-RevId:\s*(\d+)\s*$", re.MULTILINE)
MAIN_REFS = ("refs/heads/main", "refs/remotes/origin/main", "HEAD")


@dataclass(frozen=True)
class Twin:
    """The main line's copy of a commit, and how it was recognised."""

    commit: str
    how: str
    """``cherry-picked from``, ``PiperOrigin-RevId 123``, ``same title and patch`` or ``same title``."""


def main_line(history: History) -> str | None:
    """The main line's tip in this clone, or None where it has none (a clone of tags alone)."""
    for ref in MAIN_REFS:
        try:
            return git(history.path, "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}").strip()
        except GitFailed:
            continue
    return None


def main_line_twin(history: History, commit: str) -> Twin | None:
    """``commit``'s twin on the main line; None when it is on the main line itself, or has none here."""
    tip = main_line(history)
    if tip is None or is_ancestor(history, commit, tip):
        return None
    message = git(history.path, "show", "-s", "--format=%B", commit)
    picked = _CHERRY.search(message)
    if picked and is_ancestor(history, picked.group(1), tip):
        return Twin(git(history.path, "rev-parse", picked.group(1)).strip(), "cherry-picked from")
    rev_id = _REV_ID.search(message)
    if rev_id:
        found = _log(history, tip, "--fixed-strings", f"--grep=PiperOrigin-RevId: {rev_id.group(1)}")
        if found:
            return Twin(found[0], f"PiperOrigin-RevId {rev_id.group(1)}")
    return _same_author_and_date(history, commit, tip) or _same_title(history, commit, tip)


def first_release(history: History, commit: str) -> str | None:
    """The oldest JAX release whose tag holds ``commit`` (``0.4.38``), or None where no tag here holds it yet.

    A fix made on a release branch and its twin on main reach users in
    different releases (0.4.37's branch fix is in 0.4.37; its twin waits for
    the next release cut from main): each is named with its own, so a user on
    either line knows which release is safe.
    """
    try:
        tags = git(history.path, "tag", "--list", "jax-v*", "--contains", commit).split()
    except GitFailed:
        return None
    versions = [tag[len("jax-v"):] for tag in tags if dotted(tag[len("jax-v"):])]
    return min(versions, key=lambda v: (dotted(v), v)) if versions else None


def _same_author_and_date(history: History, commit: str, tip: str) -> Twin | None:
    """The one commit on main (merged branches too) with this commit's title, author and author date."""
    title, author, date = git(history.path, "show", "-s", "--format=%s%x1f%ae%x1f%at", commit).strip().split("\x1f")
    seconds = int(date)
    window = [f"--since=@{seconds - 183 * 86400}", f"--until=@{seconds + 183 * 86400}"]  # committer dates
    try:
        lines = git(history.path, "log", "--no-merges", "--format=%H%x1f%s%x1f%ae%x1f%at", *window, tip).splitlines()
    except GitFailed:
        return None
    same = [line.split("\x1f", 1)[0] for line in lines if line.split("\x1f", 1)[-1] == f"{title}\x1f{author}\x1f{date}"]
    return Twin(same[0], "same title, author and author date") if len(same) == 1 else None


def _same_title(history: History, commit: str, tip: str) -> Twin | None:
    title, date = git(history.path, "show", "-s", "--format=%s%x1f%at", commit).strip().rsplit("\x1f", 1)
    seconds = int(date)
    window = [f"--since=@{seconds - 183 * 86400}", f"--until=@{seconds + 183 * 86400}"]
    lines = git(history.path, "log", "--first-parent", "--format=%H%x1f%s", *window, tip).splitlines()
    same = [line.split("\x1f", 1)[0] for line in lines if line.split("\x1f", 1)[-1] == title]
    if not same:
        return None
    ours = _patch_id(history, commit)
    for candidate in same:
        if ours is not None and _patch_id(history, candidate) == ours:
            return Twin(candidate, "same title and patch")
    return Twin(same[0], "same title (the patches differ: adapted to the branch)") if len(same) == 1 else None


def _patch_id(history: History, commit: str) -> str | None:
    try:
        diff = git(history.path, "show", "--format=", commit)
        out = git(history.path, "patch-id", "--stable", stdin=diff.encode())
    except GitFailed:
        return None
    return out.split()[0] if out.strip() else None


def _log(history: History, tip: str, *args: str) -> list[str]:
    try:
        return git(history.path, "log", "--format=%H", *args, tip).split()
    except GitFailed:
        return []

