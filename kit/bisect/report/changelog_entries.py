"""The release-note entries worth quoting: those that name what the script calls, its error or an issue.

A release's section of JAX's CHANGELOG.md runs to dozens of entries; pasted
whole into a thread it buries the one that matters. The report quotes the
entries (a bullet with its continuation lines, under its group such as
"Bug fixes") that mention one of the *terms*: a function the script calls
(``jnp.linalg.slogdet(`` gives ``slogdet``), a name it imports, an issue it
cites (``#24843``), or what a deciding probe died of (an exception class of
JAX's own, a quoted name in its message). Names every script uses (``jit``,
``array``) are no evidence and are left out. Pure: text in, lines out.
"""

from __future__ import annotations

import builtins
import re
from dataclasses import dataclass
from typing import Iterable, Sequence

_CALL = re.compile(r"\b(?:jax|jnp|lax|jsp|jr)(?:\.\w+)*\.(\w+)\b")
"""A name reached through JAX (``jnp.linalg.slogdet``, called or passed on): its last part."""
_IMPORTED = re.compile(r"^\s*from\s+jax[\w.]*\s+import\s+\(?([\w\s,]+)\)?", re.MULTILINE)
_ISSUE = re.compile(r"(?:#|/issues/|/pull/)(\d{4,6})\b")
_QUOTED = re.compile(r"['`\"]([A-Za-z_][\w.]{3,})['`\"]")
_BULLET = re.compile(r"^(?P<indent>[ \t]*)[*-][ \t]+(?P<text>.*)$")

COMMON = frozenset("""
    jit grad vmap pmap array asarray zeros ones arange device_put block_until_ready devices device_count
    reshape sum mean max min abs print float32 float64 int32 astype normal uniform split eye dot matmul
    concatenate stack transpose allclose testing assert_allclose seed default_rng PRNGKey key linspace
    sqrt exp log where full empty shape size item tolist copy local_devices config update value_and_grad dtype
    maximum minimum numpy scipy linalg experimental random sharding tree_util interpreters extend
    """.split())
"""Names almost every JAX script calls: matching them would quote most of a section."""

MAX_LINES = 12
"""At most this many lines of one release's notes are quoted; the link gives the rest."""

MIN_LENGTH = 4
"""Shorter names (``lu``, ``qr``, ``det``) match inside too many words of prose to be evidence alone."""


@dataclass(frozen=True)
class ChangelogEntry:
    """One leaf bullet of a release section, with the group bullet above it (``Bug fixes``), if any."""

    group: str
    lines: tuple[str, ...]


def script_terms(text: str) -> list[str]:
    """What a script calls and imports from JAX, and the issues it cites, as terms to look for."""
    names = {m.group(1) for m in _CALL.finditer(text)}
    for imported in _IMPORTED.finditer(text):
        names |= {n.strip().split(" as ")[0] for n in imported.group(1).replace("\n", ",").split(",") if n.strip()}
    terms = sorted(n for n in names if len(n) >= MIN_LENGTH and n not in COMMON and not n.startswith("_"))
    return terms + issue_terms(text)


def issue_terms(text: str) -> list[str]:
    """``#24843`` for each issue or pull request number the text cites."""
    return [f"#{n}" for n in sorted(set(_ISSUE.findall(text)), key=int)]


def error_terms(exception: str | None) -> list[str]:
    """From ``XlaRuntimeError: ... 'foo_bar' ...``: the exception class unless a builtin, and quoted names."""
    if not exception:
        return []
    kind, _, message = exception.partition(":")
    terms = [kind.strip().rsplit(".", 1)[-1]] if kind.strip() and not hasattr(builtins, kind.strip()) else []
    terms += [q for q in _QUOTED.findall(message) if q not in COMMON]
    return [t for t in dict.fromkeys(terms) if re.fullmatch(r"[\w.#]+", t)]


def entries(section: str) -> list[ChangelogEntry]:
    """The leaf entries of a section's bullet lists (a bullet with no deeper bullet under it)."""
    bullets: list[tuple[int, list[str]]] = []  # (indent, lines)
    for line in section.splitlines()[1:]:  # the heading is not an entry
        bullet = _BULLET.match(line)
        if bullet:
            bullets.append((len(bullet.group("indent").expandtabs()), [line]))
        elif bullets and line.strip():
            bullets[-1][1].append(line)
    found: list[ChangelogEntry] = []
    for i, (indent, lines) in enumerate(bullets):
        if i + 1 < len(bullets) and bullets[i + 1][0] > indent:
            continue  # a group: its children are the entries
        group = next((_BULLET.match(b[1][0]).group("text")  # type: ignore[union-attr]
                      for b in reversed(bullets[:i]) if b[0] < indent), "")
        found.append(ChangelogEntry(group.strip().rstrip(":"), tuple(lines)))
    return found


def matching(section: str, terms: Sequence[str]) -> list[ChangelogEntry]:
    """The entries that mention any term (a whole word, case-insensitive)."""
    patterns = [re.compile(rf"(?<![\w#]){re.escape(t)}(?!\w)", re.IGNORECASE) for t in terms]
    return [e for e in entries(section) if any(p.search("\n".join(e.lines)) for p in patterns)]


def quoted(heading: str, section: str, terms: Sequence[str], link: str) -> list[str]:
    """A release's notes as the report quotes them: its matching entries under their groups, and how many."""
    every = entries(section)
    chosen = matching(section, terms)
    lines, shown = [heading, ""], 0
    for group, members in _grouped(chosen):
        body = [line for entry in members for line in _dedent(entry.lines, 2 if group else 0)]
        if shown + len(body) > MAX_LINES:
            body = body[:max(0, MAX_LINES - shown)]
        if not body:
            break
        lines += ([f"* {group}", ""] if group else []) + body + [""]
        shown += len(body)
    said = ", ".join(f"`{t}`" for t in terms[:12]) + (" …" if len(terms) > 12 else "")
    cut = f" (the first {MAX_LINES} lines)" if shown >= MAX_LINES and len(chosen) else ""
    lines.append(f"_{len(chosen)} of {len(every)} entries mention {said}{cut}; the whole section: {link}_")
    return lines


def first_lines(markdown: str, link: str) -> list[str]:
    """A section with nothing to look for, cut to `MAX_LINES` lines after its heading, with the link to the rest."""
    lines = markdown.splitlines()
    if len(lines) <= MAX_LINES + 1:
        return lines
    return [*lines[:MAX_LINES + 1], "", f"_{len(lines) - MAX_LINES - 1} more lines: {link}_"]


def _grouped(chosen: Iterable[ChangelogEntry]) -> list[tuple[str, list[ChangelogEntry]]]:
    groups: dict[str, list[ChangelogEntry]] = {}
    for entry in chosen:
        groups.setdefault(entry.group, []).append(entry)
    return list(groups.items())


def _dedent(lines: Sequence[str], indent: int) -> list[str]:
    """The entry's lines moved so its bullet sits at ``indent`` spaces."""
    first = len(lines[0]) - len(lines[0].lstrip())
    return [" " * indent + line[min(first, len(line) - len(line.lstrip())):] for line in lines]
