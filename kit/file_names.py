"""The one rule for text that becomes part of a file name: a check, a backend, a triage check's name.

A name read from a record, a command line or a bug report is checked against
this rule where it enters (a record that breaks it is skipped, a command line
refused), so no later ``folder / f"{name}.png"`` can leave its folder: no
separator, no leading dot, no ``..``, nothing outside ASCII, at most 100
characters. Release numbers (``0.4.35``) fit it too.
"""

from __future__ import annotations

import re

_NAME_PART = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}")

NAME_RULE = "ASCII letters, digits, '.', '-' and '_', starting with a letter or digit, at most 100 characters, no '..'"
"""The rule in words, for a refusal's TIP."""


def is_name_part(text: object) -> bool:
    """Can ``text`` be part of a file name inside a folder of the kit's, and stay there?"""
    return isinstance(text, str) and bool(_NAME_PART.fullmatch(text)) and ".." not in text


def name_part_problem(text: object, what: str) -> str | None:
    """One phrase saying why ``text`` cannot name a file (``what`` says which field), or None when it can."""
    if is_name_part(text):
        return None
    shown = repr(text) if len(repr(text)) <= 60 else repr(text)[:59] + "…"
    return f"{what} {shown} cannot be part of a file name ({NAME_RULE})"
