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

Both ways (issue 58): a commit on the main line has its copies on release
branches too (the while_loop fix bd77a703fd on main, first released in
0.4.38, is 65b6088411 on the 0.4.37 branch, released a week earlier), found
by the same stamps read the other way round (`branch_twins`). And a release
branch merged back into main (``Merge branch 'release/0.4.37' into main``) is
still a release branch: "on the main line" is main's first-parent line and
the pull requests merged into it, never the commits a release branch's merge
brought (65b6088411 was taken for a main-line commit, so its twin was never
looked for).
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from pathlib import Path

from .commit_range import is_ancestor, parents
from .version_file import dotted
from .git import GitFailed, git
from .source import History

_CHERRY = re.compile(r"\(cherry picked from commit ([0-9a-f]{7,40})\)")
_REV_ID = re.compile(r"^PiperOrigin-RevId:\s*(\d+)\s*$", re.MULTILINE)
MAIN_REFS = ("refs/heads/main", "refs/remotes/origin/main", "HEAD")


@dataclass(frozen=True)
class Twin:
    """A commit's copy on the other line (the main line's, or a release branch's), and how it was recognised."""

    commit: str
    how: str
    """``cherry-picked from``, ``PiperOrigin-RevId 123``, ``same title and patch`` or ``same title``."""
    branch: str = ""
    """The release tag whose branch the twin is on (``jax-v0.4.37``); "" for a twin on the main line."""


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
    if tip is None or release_branch(history, commit, tip) is None:
        return None
    on_main = _MainLine(history, tip, commit)
    message = git(history.path, "show", "-s", "--format=%B", commit)
    picked = _CHERRY.search(message)
    if picked and is_ancestor(history, picked.group(1), tip) and on_main(picked.group(1)):
        return Twin(git(history.path, "rev-parse", picked.group(1)).strip(), "cherry-picked from")
    rev_id = _REV_ID.search(message)
    if rev_id:
        found = [c for c in _log(history, tip, "--fixed-strings", f"--grep=PiperOrigin-RevId: {rev_id.group(1)}")
                 if on_main(c)]
        if found:
            return Twin(found[0], f"PiperOrigin-RevId {rev_id.group(1)}")
    return _same_author_and_date(history, commit, tip, on_main) or _same_title(history, commit, tip)


def branch_twins(history: History, commit: str) -> list[Twin]:
    """The copies of a main-line ``commit`` on release branches (each with its tag), by the same stamps
    `main_line_twin` reads: a ``(cherry picked from commit X)`` naming it, its ``PiperOrigin-RevId``, its title,
    author and author date, or its title and patch. Empty for a release branch's own commit, or where none is here."""
    tip = main_line(history)
    if tip is None or not is_ancestor(history, commit, tip) or release_branch(history, commit, tip) is not None:
        return []
    full = git(history.path, "rev-parse", commit).strip()
    message = git(history.path, "show", "-s", "--format=%B%x1f%s%x1f%ae%x1f%at", commit)
    body, title, author, date = message.rsplit("\x1f", 3)
    rev_id = _REV_ID.search(body)
    seconds = int(date.strip())
    window = [f"--since=@{seconds - 183 * 86400}", f"--until=@{seconds + 366 * 86400}"]
    try:  # every tagged commit near it with its title: the release branches' picks among them
        lines = git(history.path, "log", "--no-merges", "--tags=jax-v*", "--format=%H%x1f%s%x1f%ae%x1f%at%x1f%b%x1e",
                    *window).split("\x1e")
    except GitFailed:
        return []
    ours = None
    found: list[Twin] = []
    for line in lines:
        fields = line.strip("\n").split("\x1f", 4)
        if len(fields) < 5 or fields[0] == full or fields[1] != title.strip():
            continue
        candidate, _, cand_author, cand_date, cand_body = fields
        picked = _CHERRY.search(cand_body)
        cand_rev = _REV_ID.search(cand_body)
        if picked and full.startswith(picked.group(1)):
            how = "cherry-picked from it"
        elif rev_id and cand_rev and cand_rev.group(1) == rev_id.group(1):
            how = f"PiperOrigin-RevId {rev_id.group(1)}"
        elif (cand_author, cand_date.strip()) == (author.strip(), date.strip()):
            how = "same title, author and author date"
        else:
            ours = ours or _patch_id(history, full)
            if ours is None or _patch_id(history, candidate) != ours:
                continue
            how = "same title and patch"
        branch = release_branch(history, candidate, tip)
        if branch:
            found.append(Twin(candidate, how, branch))
    return found


def release_branch(history: History, commit: str, tip: str) -> str | None:
    """The release tag whose branch ``commit`` was made on (``jax-v0.4.37``); None for a commit of the main line.

    The main line is ``tip``'s first-parent line and what merges into it brought, except a merge that brings a
    release tag (``Merge branch 'release/0.4.37' into main.``): its commits stay the release branch's. A commit
    ``tip`` does not hold at all is a branch's too (named by the oldest tag holding it, else ``a branch``).
    """
    if not is_ancestor(history, commit, tip):
        return _oldest_tag(history, commit) or "a branch"
    full = git(history.path, "rev-parse", commit).strip()
    line, on_line = _first_parent_line(history.path, tip)
    if full in on_line:
        return None
    after = set(git(history.path, "rev-list", "--ancestry-path", f"{full}..{tip}").split())
    joined = next((c for c in reversed(line) if c in after), None)  # where it reached the first-parent line
    merged = parents(history, joined) if joined else []
    if len(merged) < 2:
        return None
    brought = git(history.path, "tag", "--list", "jax-v*", "--merged", merged[1], "--no-merged", merged[0]).split()
    return _oldest(brought) if brought else None


@functools.lru_cache(maxsize=4)
def _first_parent_line(path: Path, tip: str) -> tuple[tuple[str, ...], frozenset[str]]:
    """``tip``'s first-parent line, newest first, and as a set: read once per clone and tip (26,000 commits)."""
    line = tuple(git(path, "rev-list", "--first-parent", tip).split())
    return line, frozenset(line)


class _MainLine:
    """Is a commit on ``tip``'s main line (`release_branch` is None)? Asked once per commit."""

    def __init__(self, history: History, tip: str, own: str) -> None:
        self.history, self.tip, self.own = history, tip, git(history.path, "rev-parse", own).strip()

    def __call__(self, commit: str) -> bool:
        return not self.own.startswith(commit) and release_branch(self.history, commit, self.tip) is None


def _oldest_tag(history: History, commit: str) -> str | None:
    try:
        return _oldest(git(history.path, "tag", "--list", "jax-v*", "--contains", commit).split())
    except GitFailed:
        return None


def _oldest(tags: list[str]) -> str | None:
    versions = [tag for tag in tags if dotted(tag[len("jax-v"):])]
    return min(versions, key=lambda t: (dotted(t[len("jax-v"):]), t)) if versions else None


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


def _same_author_and_date(history: History, commit: str, tip: str, on_main: _MainLine) -> Twin | None:
    """The one commit on main (merged pull requests too, not a merged release branch's) with this commit's title,
    author and author date."""
    title, author, date = git(history.path, "show", "-s", "--format=%s%x1f%ae%x1f%at", commit).strip().split("\x1f")
    seconds = int(date)
    window = [f"--since=@{seconds - 183 * 86400}", f"--until=@{seconds + 183 * 86400}"]  # committer dates
    try:
        lines = git(history.path, "log", "--no-merges", "--format=%H%x1f%s%x1f%ae%x1f%at", *window, tip).splitlines()
    except GitFailed:
        return None
    same = [line.split("\x1f", 1)[0] for line in lines if line.split("\x1f", 1)[-1] == f"{title}\x1f{author}\x1f{date}"]
    same = [candidate for candidate in same if on_main(candidate)]
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

