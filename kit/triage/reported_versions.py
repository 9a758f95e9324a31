"""Which JAX the reporter ran, and what the report says about other releases.

Read in the order a triager trusts them: the output of
``jax.print_environment_info()`` (``jax:    0.4.36``), a ``pip list`` or
``pip freeze`` line, a printed ``jax.__version__``; then prose: "after
upgrading from 0.4.35 to 0.4.36", "since 0.4.36" (the first bad release),
"worked in 0.4.35" (a good one), "jax 0.4.36". A development build
(``0.4.36.dev20241122``) names the release it was cut after, said as such.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from .issue_text import Block, prose_lines

_V = r"v?(\d+\.\d+\.\d+(?:\.\d+)?)((?:\.dev\d+|rc\d+)?(?:\+\S+)?)"

# (what it is, pattern): the first pattern that finds a version wins for its role.
_REPORTED = [
    ("jax.print_environment_info() output", re.compile(rf"(?m)^\s*jax:\s+{_V}\s*$")),
    ("a pip list line", re.compile(rf"(?m)^\s*jax\s+{_V}\s*$")),
    ("a pip freeze line", re.compile(rf"(?m)^\s*jax==\s*{_V}\s*$")),
    ("a printed jax.__version__", re.compile(rf"__version__\W*?\n?\s*(?:#\s*)?['\"]?{_V}['\"]?")),
]
_UPGRADE = re.compile(rf"(?i)\b(?:upgrad\w*|updat\w*|mov\w*|switch\w*|going)\s+(?:jax\s+)?from\s+(?:jax\s+)?{_V}"
                      rf"\s+to\s+(?:jax\s+)?{_V}")
_SINCE = re.compile(rf"(?i)\b(?:since|starting (?:with|in|from)|as of|broke in|broken in|regressed in)\s+"
                    rf"(?:jax\s+)?(?:version\s+)?{_V}")
_UPGRADE_TO = re.compile(rf"(?i)\b(?:after|since)\s+(?:upgrad\w*|updat\w*)\s+(?:jax\s+)?to\s+(?:jax\s+)?{_V}")
_GOOD = re.compile(rf"(?i)\b(?:work(?:s|ed|ing)?|was (?:fine|correct|ok)|passe[sd]|fine)\b[^.\n]{{0,40}}?"
                   rf"\b(?:in|on|with|under|using)\s+(?:jax\s+)?(?:version\s+)?{_V}")
_SAME = re.compile(rf"(?i)\b(?:with|on|in|under|using)\s+jax(?:\s*/\s*jaxlib)?\s+{_V}[^.]{{0,80}}?\b"
                   rf"(?:prints|gives|returns|shows|outputs)\s+the\s+(?:same|right|correct|expected)\b")
""""With jax/jaxlib 0.5.3 the same script prints the same row three times": a release that worked."""
_PROSE = re.compile(rf"(?i)\bjax(?:lib)?\s*(?:version\s*|v|==\s*)?{_V}")


@dataclass(frozen=True)
class Versions:
    """The releases a report names, and where each was read ("" where the report does not say)."""

    reported: str = ""
    """The release the reporter ran."""
    last_good: str = ""
    """A release the reporter says worked."""
    first_bad: str = ""
    """The release the reporter says it broke in ("since 0.4.36")."""
    notes: tuple[str, ...] = field(default=())
    """Where each came from, in words."""


def reported_versions(text: str, blocks: list[Block]) -> Versions:
    """What the report says about releases (see the module's docstring); an empty `Versions` when nothing."""
    notes: list[str] = []
    reported = _first_reported(text, notes)
    prose = "\n".join(line for _, line in prose_lines(text, blocks))
    last_good = first_bad = ""
    upgrade = _UPGRADE.search(prose)
    if upgrade:
        last_good, first_bad = _release(upgrade, 1, notes), _release(upgrade, 3, notes)
        notes.append(f"upgrading from {last_good} to {first_bad} (the prose: {upgrade.group(0)!r})")
    for pattern, role in ((_UPGRADE_TO, "first bad"), (_SINCE, "first bad"), (_GOOD, "last good"),
                          (_SAME, "last good")):
        found = pattern.search(prose)
        if found and not (first_bad if role == "first bad" else last_good):
            value = _release(found, 1, notes)
            first_bad, last_good = (value, last_good) if role == "first bad" else (first_bad, value)
            notes.append(f"{role} {value} (the prose: {found.group(0)!r})")
    if not reported:  # the release it broke in, else the first release named that is not the one that worked
        named = next((found for found in _PROSE.finditer(prose) if found.group(1) != last_good), None)
        reported = first_bad or (_release(named, 1, notes) if named else "")
        if reported:
            notes.append(f"ran {reported} ({'the release it broke in' if first_bad else 'named in the prose'})")
    return Versions(reported, last_good, first_bad, tuple(notes))


def _first_reported(text: str, notes: list[str]) -> str:
    for what, pattern in _REPORTED:
        found = pattern.search(text)
        if found:
            version = _release(found, 1, notes)
            notes.append(f"ran {version} ({what})")
            return version
    return ""


def _release(found: re.Match[str], group: int, notes: list[str]) -> str:
    """The release a version names: itself, or for a development build, the release it says so about."""
    version, suffix = found.group(group), found.group(group + 1)
    if suffix.startswith((".dev", "rc")):
        notes.append(f"{version}{suffix} is a development build or a candidate before {version}")
    return version
