"""What a commit is, for a report: hash, date, author, title, pull request, files, link.

Also the two reads a report makes of a range: which files changed between
two commits (the non-Python files under ``jaxlib/`` say what a jaxlib build
compiled in), and a file's text at a tag (CHANGELOG.md as it stood there).
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass
from typing import Sequence

from ..json_types import JsonObject
from .git import GitFailed, git
from .source import History

JAX_WEB = "https://github.com/jax-ml/jax"

# "Merge pull request #27094 from ...", "... (#26812)", "PR #26812: ...", and copybara's "PiperOrigin-RevId"
# lines carry no PR. The first match in the message wins.
_PR = (re.compile(r"Merge pull request #(\d+)"), re.compile(r"\(#(\d+)\)\s*$", re.MULTILINE),
       re.compile(r"\bPR #(\d+)\b"))
_FIELD_SEPARATOR = "\x1f"


@dataclass(frozen=True)
class CommitInfo:
    """One commit as a report names it."""

    hash: str
    date: str
    """Author date, ISO 8601."""
    author: str
    title: str
    pr: int | None
    files: tuple[str, ...]
    """Paths it changed (against its first parent)."""
    parents: tuple[str, ...] = ()

    @property
    def url(self) -> str:
        return commit_url(self.hash)

    @property
    def pr_url(self) -> str | None:
        return f"{JAX_WEB}/pull/{self.pr}" if self.pr else None

    def to_json(self) -> JsonObject:
        return {**asdict(self), "files": list(self.files), "parents": list(self.parents), "url": self.url,
                "pr_url": self.pr_url}


def commit_url(commit: str) -> str:
    return f"{JAX_WEB}/commit/{commit}"


def compare_url(old: str, new: str) -> str:
    """GitHub's comparison of two commits or tags, oldest first."""
    return f"{JAX_WEB}/compare/{old}...{new}"


def pr_number(message: str) -> int | None:
    """The pull request a commit message names, if any."""
    for pattern in _PR:
        match = pattern.search(message)
        if match:
            return int(match.group(1))
    return None


def commit_info(history: History, commit: str) -> CommitInfo:
    """Metadata and changed files of one commit (no file contents needed)."""
    fields = git(history.path, "show", "-s", "--format=%H%x1f%aI%x1f%an <%ae>%x1f%P%x1f%s%x1f%B", commit)
    full, date, author, parent_list, title, body = fields.split(_FIELD_SEPARATOR, 5)
    parent_hashes = tuple(parent_list.split())
    files = changed_files(history, parent_hashes[0], full) if parent_hashes else _root_files(history, full)
    return CommitInfo(full, date, author, title, pr_number(body), tuple(files), parent_hashes)


def changed_files(history: History, old: str, new: str, under: str | None = None) -> list[str]:
    """Paths that differ between two commits (trees only), optionally only those under a folder."""
    args = ["diff", "--name-only", "--no-renames", old, new]
    if under:
        args += ["--", under]
    return [line for line in git(history.path, *args).splitlines() if line]


def _root_files(history: History, commit: str) -> list[str]:
    return git(history.path, "ls-tree", "-r", "--name-only", commit).splitlines()


def compiled_changes(history: History, old: str, new: str) -> list[str]:
    """Files under ``jaxlib/`` that changed and are not Python: what only a new jaxlib build carries."""
    return [path for path in changed_files(history, old, new, "jaxlib/") if not path.endswith(".py")]


def xla_patches(history: History, old: str, new: str) -> list[str]:
    """Patch files JAX's build applies to XLA (``third_party/xla/*.patch``) that changed between two commits.

    A patch release can change the compiled XLA without moving its pinned
    revision: jax-v0.8.3 is jax-v0.8.2 with two XLA fixes laid on as
    ``third_party/xla/coordination_service_config_fix.patch``, the same revision at both ends.
    """
    return [path for path in changed_files(history, old, new, "third_party/") if path.endswith(".patch")]


def read_text(history: History, rev: str, path: str) -> str | None:
    """A file's text at a commit or tag; None when it is not there."""
    try:
        return git(history.path, "show", f"{rev}:{path}")
    except GitFailed:
        return None


def headlines(history: History, commits: Sequence[str]) -> dict[str, tuple[str, str]]:
    """(author date, title) of many commits from one ``git show``, for candidate lists."""
    if not commits:
        return {}
    out = git(history.path, "show", "-s", "--format=%H%x1f%aI%x1f%s", *commits)
    found: dict[str, tuple[str, str]] = {}
    for line in out.splitlines():
        parts = line.split(_FIELD_SEPARATOR)
        if len(parts) == 3:
            found[parts[0]] = (parts[1], parts[2])
    return found


# JAX's Python switches paths on the binary it runs with: comparisons of these against a number.
_GATE = re.compile(r"\b(xla_extension_version|jaxlib_extension_version|ifrt_version|jaxlib_version|"
                   r"_jaxlib_version|version\.__version_info__)\s*(?:[<>]=?|==|!=)\s*[\w.()\[\], ]+")


def version_gates(history: History, commit: str) -> list[str]:
    """The jaxlib version comparisons a commit's diff adds or changes (``jaxlib_extension_version >= 340``)."""
    try:
        diff = git(history.path, "show", "--format=", "--unified=0", "--no-renames", commit, "--", "jax", "jaxlib")
    except GitFailed:
        return []
    found: list[str] = []
    for line in diff.splitlines():
        if line.startswith("+") and not line.startswith("+++"):
            for match in _GATE.finditer(line):
                gate = " ".join(match.group(0).split()).rstrip(": ,")
                while gate.count(")") > gate.count("(") and gate.endswith(")"):
                    gate = gate[:-1].rstrip()  # the closing parenthesis of a call around the comparison
                if gate not in found:
                    found.append(gate)
    return found[:5]


def python_changes(history: History, old: str, new: str) -> list[str]:
    """The Python files under jax/ and jaxlib/ that differ between two commits, ``jax/version.py`` aside.

    Empty: the two commits run the same Python but for the version they
    declare (a release commit and the version bump after it), so a probe of
    one stands for the other. A git failure lists a placeholder: not the same.
    """
    try:
        out = git(history.path, "diff", "--name-only", "--no-renames", "--no-textconv", "--no-ext-diff", old, new,
                  "--", "jax", "jaxlib")
    except GitFailed:
        return ["?"]
    return [path for path in out.split() if path.endswith(".py") and path != "jax/version.py"]
