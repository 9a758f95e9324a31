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

Where a Python change that needs the newer build was never ruled out (the
commits before it cannot run there), :func:`gated_leads` names the commits
whose diff adds, or edits code beside, a comparison of ``jaxlib_version`` or
the extension version that comes out differently on the two builds: 2ce88c950a
adds ``jaxlib_version <= (0, 5, 1)`` to the CPU triangular solve, and
f93c2a1aa5 edits the lines under it.
"""

from __future__ import annotations

import operator
import re
from dataclasses import dataclass

from .export import is_partial
from .git import GitFailed, git
from .op_files import OpFiles
from .source import History

_JAXLIB_GATE = re.compile(r"\bjaxlib_version\s*(<=|>=|<|>|==|!=)\s*\(\s*(\d+(?:\s*,\s*\d+)*)\s*,?\s*\)")
_NUMBER_GATE = re.compile(r"\b(?:xla|jaxlib)_extension_version\s*(<=|>=|<|>|==|!=)\s*(\d+)")
_COMPARE = {"<=": operator.le, ">=": operator.ge, "<": operator.lt, ">": operator.gt, "==": operator.eq,
            "!=": operator.ne}
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


@dataclass(frozen=True)
class BuildPair:
    """The two builds a gate is read against: jaxlib versions (dotted tuples) and extension versions."""

    old_jaxlib: tuple[int, ...]
    new_jaxlib: tuple[int, ...]
    old_extension: int | None = None
    new_extension: int | None = None


def gated_leads(history: History, old: str, new: str, builds: BuildPair,
                only_in: OpFiles | None = None) -> tuple[list[Lead], str]:
    """Commits in ``old..new`` whose diff adds, or edits code beside, a version gate the two builds answer apart.

    One ``git log -p`` over the range's Python (about a second for 500
    commits). A gate in an added line: the commit adds it; in a context or
    removed line: the commit changes code the gate decides (its hunk holds it).
    With ``only_in`` (the files the failing op lives in, :mod:`kit.history.op_files`)
    only the gates in those files are kept, those whose hunk names the op
    first; the note says how many there were in all.
    """
    if is_partial(history):
        return [], "gates on the jaxlib version were not searched: the clone is partial (--jax-repo a full clone)"
    try:
        out = git(history.path, "log", "--format=\x1e%H\x1f%s", "-p", "--unified=3", "--no-renames",
                  f"{old}..{new}", "--", "jax/*.py", "jaxlib/*.py")
    except GitFailed:
        return [], "gates on the jaxlib version were not searched: git log failed"
    every: list[tuple[Lead, list[GateSite]]] = []
    for entry in out.split("\x1e")[1:]:
        head, _, diff = entry.partition("\n")
        commit, _, title = head.partition("\x1f")
        sites = gate_sites(diff, builds)
        if sites:
            every.append((Lead(commit, title, _why(sites[0], builds)), sites))
    if only_in is None:
        return [lead for lead, _ in every][:MAX_LEADS], ""
    kept: list[tuple[bool, Lead]] = []
    for lead, sites in every:
        inside = [site for site in sites if site.file in only_in.files]
        if inside:
            named = [site for site in inside if only_in.named_in(site.hunk)]
            best = (named or inside)[0]
            where = f" in {best.file}" + (f", in a hunk naming {_named(best, only_in)}" if named else "")
            kept.append((not named, Lead(lead.commit, lead.title, _why(best, builds) + where)))
    kept.sort(key=lambda item: item[0])  # stable: the hunks that name the op first, each group newest first
    note = (f"gated leads filtered to the files the failing op lives in, {only_in.describe()}: "
            f"{len(kept)} of {len(every)} commits that touch a gate the builds answer apart")
    return [lead for _, lead in kept][:MAX_LEADS], note


@dataclass(frozen=True)
class GateSite:
    """One gate a diff touches: where, whether the diff adds it, and the hunk (header and lines) it sits in."""

    file: str
    gate: str
    added: bool
    hunk: str


def gate_sites(diff: str, builds: BuildPair) -> list[GateSite]:
    """Every gate the builds answer apart in a commit's diff, added ones first (each file, each hunk)."""
    sites: list[GateSite] = []
    for file, hunk in _hunks(diff):
        for line in hunk.splitlines()[1:]:
            if line[:1] not in ("+", "-", " "):
                continue
            for gate in _gates_in(line[1:], builds):
                sites.append(GateSite(file, gate, line.startswith("+"), hunk))
    return sorted(sites, key=lambda site: not site.added)


def _hunks(diff: str) -> list[tuple[str, str]]:
    """(file, hunk text from its ``@@`` header on) for each hunk of a ``git log -p`` entry."""
    found: list[tuple[str, str]] = []
    file, lines = "", list[str]()
    for line in diff.splitlines():
        if line.startswith("diff --git "):
            if lines:
                found.append((file, "\n".join(lines)))
            file, lines = line.rpartition(" b/")[2], []
        elif line.startswith("@@"):
            if lines:
                found.append((file, "\n".join(lines)))
            lines = [line]
        elif lines and not line.startswith(("+++", "---")):
            lines.append(line)
    if lines:
        found.append((file, "\n".join(lines)))
    return found


def _why(site: GateSite, builds: BuildPair) -> str:
    if site.added:
        return (f"adds the gate `{site.gate}` (jaxlib {_dotted(builds.old_jaxlib)} and "
                f"{_dotted(builds.new_jaxlib)} answer it apart)")
    return f"edits code beside the gate `{site.gate}`"


def _named(site: GateSite, only_in: OpFiles) -> str:
    return " / ".join(only_in.named_in(site.hunk))


def _gates_in(text: str, builds: BuildPair) -> list[str]:
    found = []
    for match in _JAXLIB_GATE.finditer(text):
        bound = tuple(int(part) for part in match.group(2).split(","))
        compare = _COMPARE[match.group(1)]
        if compare(builds.old_jaxlib[:len(bound)], bound) != compare(builds.new_jaxlib[:len(bound)], bound):
            found.append(" ".join(match.group(0).split()))
    if builds.old_extension is not None and builds.new_extension is not None:
        for match in _NUMBER_GATE.finditer(text):
            compare, number = _COMPARE[match.group(1)], int(match.group(2))
            if compare(builds.old_extension, number) != compare(builds.new_extension, number):
                found.append(" ".join(match.group(0).split()))
    return found


def _dotted(version: tuple[int, ...]) -> str:
    return ".".join(str(part) for part in version)
