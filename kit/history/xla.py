"""The XLA revision a JAX commit builds jaxlib with, and the link between two of them.

JAX pins XLA by commit in ``third_party/xla/workspace.bzl`` (``XLA_COMMIT =
"..."``); newer trees moved the pin to ``third_party/xla/revision.bzl``. When
a change is in the compiled jaxlib rather than in JAX's Python, the XLA range
between two release tags is where to read next.
"""

from __future__ import annotations

import re

from .commits import read_text
from .source import History

XLA_WEB = "https://github.com/openxla/xla"
PIN_FILES = ("third_party/xla/revision.bzl", "third_party/xla/workspace.bzl")
_XLA_COMMIT = re.compile(r"""^XLA_COMMIT\s*=\s*["']([0-9a-f]{7,40})["']""", re.MULTILINE)


def parse_xla_commit(text: str) -> str | None:
    """``XLA_COMMIT = "df97..."`` → the hash; None when the file does not pin one."""
    match = _XLA_COMMIT.search(text)
    return match.group(1) if match else None


def xla_revision(history: History, rev: str) -> str | None:
    """The XLA commit JAX at ``rev`` builds with; None when neither pin file names one."""
    for path in PIN_FILES:
        text = read_text(history, rev, path)
        found = parse_xla_commit(text) if text else None
        if found:
            return found
    return None


def xla_compare_url(old: str, new: str) -> str:
    return f"{XLA_WEB}/compare/{old}...{new}"
