"""Which commits of JAX's history may be fixes with a regression test: the harvest's candidates.

A candidate changes JAX's code (``jax/`` or ``jaxlib/``) and a test file
under ``tests/`` in one commit, and its message says so: "fix" anywhere in
it, or an upstream issue it fixes. One ``git log`` lists the whole range
with each commit's files, so a release's few hundred commits cost one
command, and JAX's 16,000 since 0.4.30 a few seconds.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ...history.git import git
from ...history.source import History

CODE_ROOTS = ("jax/", "jaxlib/")
TESTS_ROOT = "tests/"

_FIX_WORD = re.compile(r"\bfix", re.IGNORECASE)
_ISSUE = re.compile(r"(?:\b(?:fixes|fixed|closes|resolves)\s+#(\d+))|(?:github\.com/(?:jax-ml|google)/jax/issues/(\d+))",
                    re.IGNORECASE)
ISSUES_URL = "https://github.com/jax-ml/jax/issues/"

_RECORD = "\x1e"
_FIELD = "\x1f"


@dataclass(frozen=True)
class HarvestCandidate:
    """A commit that changes JAX's code and a test file, with a message that names a fix."""

    commit: str
    parent: str
    date: str
    title: str
    """The message's first line (from outside: shown only through `kit.markdown_text.inert`)."""
    test_files: tuple[str, ...]
    python_code: bool = True
    """Whether it changes Python under ``jax/`` or ``jaxlib/`` (False: only the compiled part, which no overlay lays)."""
    issue: str = ""
    """The upstream issue the message names as fixed (``https://github.com/jax-ml/jax/issues/N``), else empty."""

    @property
    def short(self) -> str:
        return self.commit[:10]


def list_candidates(history: History, since: str, until: str) -> list[HarvestCandidate]:
    """The candidates of ``since..until`` (no merges), oldest first."""
    out = git(history.path, "log", "--no-merges", "--reverse", "--name-only",
              f"--format={_RECORD}%H{_FIELD}%P{_FIELD}%cI{_FIELD}%B{_FIELD}", f"{since}..{until}", "--",
              timeout=600)
    return [candidate for record in out.split(_RECORD)[1:] if (candidate := parse_record(record)) is not None]


def parse_record(record: str) -> HarvestCandidate | None:
    """One ``git log`` record (hash, parents, date, message, then the files) as a candidate, or None if it is none."""
    commit, parents, date, message, files_text = record.split(_FIELD, 4)
    files = [line.strip() for line in files_text.splitlines() if line.strip()]
    parent_list = parents.split()
    if len(parent_list) != 1:
        return None  # a root commit has no parent to compare with
    tests = tuple(path for path in files if path.startswith(TESTS_ROOT) and path.endswith(".py"))
    code = any(path.startswith(CODE_ROOTS) for path in files)
    issue = issue_of(message)
    if not (tests and code and (_FIX_WORD.search(message) or issue)):
        return None
    title = message.strip().splitlines()[0] if message.strip() else ""
    python_code = any(path.startswith(CODE_ROOTS) and path.endswith(".py") for path in files)
    return HarvestCandidate(commit, parent_list[0], date, title, tests, python_code, issue)


def issue_of(message: str) -> str:
    """The first upstream issue the message says it fixes, as a URL; empty where it names none."""
    match = _ISSUE.search(message)
    if match is None:
        return ""
    return ISSUES_URL + (match.group(1) or match.group(2))
