"""Where to read next when a change is not in JAX's Python: leads in the range, not an answer.

When the same Python behaves differently on two jaxlib builds, the cause is
in the compiled jaxlib (XLA, the C++ extensions), which JAX's history does
not hold. What it does hold, and a maintainer reads first:

* **gates**: commits whose diff compares ``xla_extension_version`` or
  ``jaxlib_extension_version`` (the binary's ``xla_client._version``) with a
  number the newer build reaches and the older did not: Python that takes a
  new path only with the new binary;
* **fixes**: commits whose message says ``Fixes #N`` (or links an issue).

Both are read with ``git log`` over the range; the gates need the diffs, so
in a partial clone (contents fetched on demand) they are left out and said so.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .export import is_partial
from .git import GitFailed, git
from .source import History

_GATE_NUMBER = re.compile(r"\b(?:xla|jaxlib)_extension_version\s*(>=|>|==)\s*(\d+)")
_FIXES = re.compile(r"\b(?:fix(?:es|ed)?|closes|resolves)\s+(?:#|https://github\.com/jax-ml/jax/issues/)(\d+)",
                    re.IGNORECASE)
MAX_LEADS = 12


@dataclass(frozen=True)
class Lead:
    commit: str
    title: str
    why: str
    """``gates on jaxlib_extension_version >= 334`` or ``says it fixes #28070``."""


def binary_leads(history: History, old: str, new: str, old_version: int | None,
                 new_version: int | None) -> tuple[list[Lead], str]:
    """(the leads in ``old..new``, a note on what could not be looked at); gates first, then fixes."""
    leads: list[Lead] = []
    note = ""
    if is_partial(history):
        note = "gates on the binary's version were not searched: the clone is partial (--jax-repo a full clone)"
    elif old_version is not None and new_version is not None and new_version > old_version:
        leads += _gates(history, old, new, old_version, new_version)
    elif old_version is None or new_version is None:
        note = "the builds did not say their extension version, so gates on it were not searched"
    seen = {lead.commit for lead in leads}
    leads += [lead for lead in _fixes(history, old, new) if lead.commit not in seen]
    return leads[:MAX_LEADS], note


def _gates(history: History, old: str, new: str, old_version: int, new_version: int) -> list[Lead]:
    try:
        out = git(history.path, "log", "--format=\x1e%H\x1f%s", "-p", "--unified=0",
                  "-G", r"(xla|jaxlib)_extension_version *[<>=]", f"{old}..{new}", "--", "jax", "jaxlib")
    except GitFailed:
        return []
    leads = []
    for entry in out.split("\x1e")[1:]:
        head, _, diff = entry.partition("\n")
        commit, _, title = head.partition("\x1f")
        added = [m for line in diff.splitlines() if line.startswith("+") for m in _GATE_NUMBER.finditer(line)]
        crossed = sorted({int(m.group(2)) for m in added if old_version < int(m.group(2)) <= new_version})
        if crossed:
            leads.append(Lead(commit, title, f"gates on the extension version >= {crossed[0]} "
                                             f"(the builds: {old_version} → {new_version})"))
    return leads


def _fixes(history: History, old: str, new: str) -> list[Lead]:
    try:
        out = git(history.path, "log", "--format=\x1e%H\x1f%s\x1f%B", "-i", "-E",
                  r"--grep=(fix(es|ed)?|closes|resolves) +(#|https://github\.com/jax-ml/jax/issues/)[0-9]+",
                  f"{old}..{new}")
    except GitFailed:
        return []
    leads = []
    for entry in out.split("\x1e")[1:]:
        commit, title, body = (entry.split("\x1f", 2) + ["", ""])[:3]
        issue = _FIXES.search(body)
        if issue:
            leads.append(Lead(commit.strip(), title, f"says it fixes #{issue.group(1)}"))
    return leads
