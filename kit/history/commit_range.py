"""The commits between two JAX releases, as one ordered list a bisect can walk.

JAX's history is not a line: GitHub pull requests arrive as merges, and
patch releases are cut on release branches (``jax-v0.5.2`` is "a patch
release over 0.5.1": three commits on ``release/0.5.2``, merged back into
main two weeks later). The search needs one order in which the outcome
changes once, so it walks the newer tag's *first-parent line*: the states
main actually passed through, oldest first. Its old end is

* the older tag itself, when that tag is on the line;
* otherwise the *branch point*: the newest commit on the line that the older
  tag's history contains (the older tag was cut on a branch; the commits on
  that branch are listed, and reach the line through the merge that brought
  them back, so the search sees them there; when the branch was never merged
  back, the older tag is no ancestor of the newer one, and a change made only
  on that branch is outside the range: the report says so);
* the older tag itself again when no commit on the line is in its history
  (a filtered clone such as the CI bundle, whose older tag is a root).

A history that stops inside the range (a shallow clone's edge, a graft) is
refused instead (:func:`refuse_a_cut_history`): the commit at the edge would
look like a root that added the whole tree.

A merge found to be the first changed commit is opened with
:func:`merged_branch`: the same kind of list along the branch it merged.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from ..errors import UsageError
from .git import GitFailed, git
from .source import History


def tag(version: str) -> str:
    """A JAX release's git tag: ``jax-v0.5.3``."""
    return f"jax-v{version}"


@dataclass(frozen=True)
class CommitRange:
    """An old end and the commits after it, oldest first, ending at the newer tag (or the merged branch's tip)."""

    old_end: str
    commits: tuple[str, ...]
    shape: str
    """One sentence: how this list was laid out from the history (for the report)."""
    old_name: str = ""
    new_name: str = ""
    off_line: tuple[str, ...] = field(default_factory=tuple)
    """Commits in the older tag's history that are not on this line (a release branch's own), newest first."""

    @property
    def candidates(self) -> tuple[str, ...]:
        """What the search walks: the old end, then every commit after it."""
        return (self.old_end, *self.commits)


def resolve(history: History, rev: str) -> str:
    """A tag or commit as a full hash; a UsageError when the clone does not have it."""
    try:
        return git(history.path, "rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}").strip()
    except GitFailed:
        raise UsageError(f"{rev} is not a commit in {history.origin}",
                         f"update the clone (git -C {history.path} fetch --tags origin) or check the release") from None


def parents(history: History, commit: str) -> list[str]:
    return git(history.path, "rev-list", "--parents", "-n", "1", commit).split()[1:]


def first_parent_line(history: History, old: str, new: str) -> list[str]:
    """``new``'s first-parent line back to (not including) the first commit ``old`` contains, oldest first."""
    return git(history.path, "rev-list", "--first-parent", "--reverse", f"{old}..{new}").split()


def release_range(history: History, old_version: str, new_version: str) -> CommitRange:
    """The commits from release ``old_version`` to ``new_version`` (older first by version) to search."""
    old_tag, new_tag = tag(old_version), tag(new_version)
    old, new = resolve(history, old_tag), resolve(history, new_tag)
    line = first_parent_line(history, old, new)
    if not line:
        raise UsageError(f"{new_tag} holds no commit that {old_tag} lacks: nothing to search between them",
                         "check that the two releases are given oldest first and differ")
    below = parents(history, line[0])
    refuse_a_cut_history(history, old, new, old_tag, new_tag, line[0], plain=bool(below) and below[0] == old)
    n = len(line)
    if below and below[0] == old:
        shape = f"{old_tag} is on {new_tag}'s first-parent line: the {n} commits after it, oldest first"
        return CommitRange(old, tuple(line), shape, old_tag, new_tag)
    if below:
        return _from_branch_point(history, old, new, old_tag, new_tag, below[0], line)
    shape = (f"no commit on {new_tag}'s first-parent line is in {old_tag}'s history (a filtered clone "
             f"whose {old_tag} is a root of its own): the search takes {old_tag} itself as the old end, then the line's {n} commits")
    return CommitRange(old, tuple(line), shape, old_tag, new_tag)


def refuse_a_cut_history(history: History, old: str, new: str, old_tag: str, new_tag: str, first: str,
                         plain: bool) -> None:
    """A UsageError when the clone's history stops inside the range: a shallow clone's edge, or a graft.

    git shows a commit whose parents a shallow clone lacks (or a graft hid) as
    a root, so the line would seem to start there and its first commit would
    seem to add the whole tree: the search would name a commit for no reason.
    A real root (a filtered clone such as the CI bundle's, whose older tag is
    a root of its own) has no parents in its object, and is walked as before.
    ``plain``: the older tag is the parent of the line's ``first`` commit, so
    nothing before it is read and its own history may stop anywhere.
    """
    edges = _shallow_edges(history)
    if edges:
        cut = edges & set(git(history.path, "rev-list", f"{old}..{new}").split())
        if not cut and old in edges and not plain:
            cut = {old}  # the branch point is looked for in the older tag's history, which stops at the tag
        if cut:
            raise UsageError(
                f"{history.origin} is a shallow clone whose history stops at {min(cut)[:10]}, between {old_tag} and "
                f"{new_tag}: the commits between them cannot be walked, and the first one left would look like "
                "it changed the whole tree",
                f"deepen it: git -C {history.path} fetch --unshallow (or pass --jax-repo PATH to a full clone; "
                "one without file contents is enough: git clone --filter=blob:none https://github.com/jax-ml/jax)")
    if not parents(history, first) and _stored_parents(history, first):
        raise UsageError(
            f"{history.origin} shows {first[:10]} without the parents its commit names (a graft or a replaced "
            f"commit): the commits between {old_tag} and {new_tag} cannot be walked",
            f"remove the graft (git -C {history.path} replace -l; info/grafts), or pass --jax-repo PATH to a full "
            "clone of https://github.com/jax-ml/jax")


def _shallow_edges(history: History) -> set[str]:
    """The commits a shallow clone has without their parents (its ``shallow`` file); empty for a whole clone."""
    where = Path(git(history.path, "rev-parse", "--git-path", "shallow").strip())
    try:
        return set((where if where.is_absolute() else history.path / where).read_text().split())
    except OSError:
        return set()


def _stored_parents(history: History, commit: str) -> list[str]:
    """The parents written in the commit object itself, whatever grafts or replacements show instead."""
    text = git(history.path, "--no-replace-objects", "cat-file", "commit", commit)
    header = text.split("\n\n", 1)[0]
    return [line.split()[1] for line in header.splitlines() if line.startswith("parent ")]


def _from_branch_point(history: History, old: str, new: str, old_tag: str, new_tag: str, branch_point: str,
                       line: list[str]) -> CommitRange:
    """The older tag was cut on a branch: start from where that branch left the newer tag's line."""
    where = (f"the search walks {new_tag}'s line from {branch_point[:10]}, the newest commit on it that "
             f"{old_tag} contains, as the old end")
    if is_ancestor(history, old, new):
        off_line = tuple(git(history.path, "rev-list", old, f"^{branch_point}").split())
        shape = (f"{old_tag} is not on {new_tag}'s first-parent line (it was cut on a release branch: "
                 f"{len(off_line)} commit(s) on the branch); {where}; the branch's commits come back in "
                 f"through the merge that brought them to main, where the search sees them")
    else:
        off_line = tuple(git(history.path, "rev-list", old, f"^{new}").split())
        shape = (f"{old_tag} is not an ancestor of {new_tag} (cut on a release branch never merged into "
                 f"{new_tag}'s history: {len(off_line)} commit(s) only there, listed in the report); {where}; "
                 f"a change made only on that branch is not in this range")
    return CommitRange(branch_point, tuple(line), shape, branch_point[:10], new_tag, off_line)


def is_ancestor(history: History, old: str, new: str) -> bool:
    try:
        git(history.path, "merge-base", "--is-ancestor", old, new)
    except GitFailed:
        return False
    return True


def merged_branch(history: History, merge: str) -> CommitRange | None:
    """The commits a merge brought in, along its second parent's first-parent line; None for a plain commit."""
    found = parents(history, merge)
    if len(found) < 2:
        return None
    main, side = found[0], found[1]
    line = first_parent_line(history, main, side)
    if not line:
        return None  # the branch adds nothing the main line lacks
    below = parents(history, line[0])
    old_end = below[0] if below else main
    shape = (f"{merge[:10]} is a merge: the search continues along the {len(line)} commit(s) it merged, "
             f"from {old_end[:10]}, where that branch left the main line")
    return CommitRange(old_end, tuple(line), shape, old_end[:10], side[:10])


def within(history: History, commit_range: CommitRange, start: str | None, end: str | None) -> CommitRange:
    """``commit_range`` from ``start`` to ``end`` (``--good-commit`` / ``--bad-commit``; either may be None).

    Each is a hash or a tag. One on the line searched is taken as it is; one
    off it (a release branch's commit, a pull request's) is met where the
    line does: the start at the newest line commit it contains, the end at
    the first line commit that contains it, said so in the range's sentence.
    """
    line = list(commit_range.candidates)
    first, last, said = 0, len(line) - 1, []
    if start is not None:
        first, how = _place(history, line, resolve(history, start), start, older=True)
        said.append(how)
    if end is not None:
        last, how = _place(history, line, resolve(history, end), end, older=False)
        said.append(how)
    if last <= first:
        raise UsageError(f"the commit range from {start or line[0][:10]} to {end or line[-1][:10]} is empty in "
                         f"{commit_range.old_name} … {commit_range.new_name}",
                         "give the older commit to the side the older release is on (--good-commit with a "
                         "regression's --good, --bad-commit with a fix's --bad)")
    shape = f"{commit_range.shape}; {'; '.join(said)}: {last - first} commits after the start, oldest first"
    return CommitRange(line[first], tuple(line[first + 1:last + 1]), shape, start or commit_range.old_name,
                       end or commit_range.new_name, commit_range.off_line)


def _place(history: History, line: list[str], commit: str, named: str, older: bool) -> tuple[int, str]:
    """Where ``commit`` meets ``line`` (an index), and one clause saying how."""
    if commit in line:
        return line.index(commit), f"{'starting' if older else 'ending'} at {named}"
    if older:
        inside = [i for i, c in enumerate(line) if is_ancestor(history, c, commit)]
        if inside:
            return inside[-1], (f"{named} is not on the line: the search starts at {line[inside[-1]][:10]}, the "
                                f"newest commit on it that {named} contains (their merge base)")
    else:
        holding = [i for i, c in enumerate(line) if is_ancestor(history, commit, c)]
        if holding:
            return holding[0], (f"{named} is not on the line: the search ends at {line[holding[0]][:10]}, the "
                                f"first commit on it that contains {named}")
    raise UsageError(f"{named} is not between {line[0][:10]} and {line[-1][:10]} (the release range searched)",
                     "give a commit between the two releases, or other --good/--bad releases around it")
