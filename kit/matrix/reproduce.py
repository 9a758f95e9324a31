"""The Reproduce cell of a matrix row: a command that works as written.

A record says how it was made (``nox -s scaling-0.6.0``). That session exists
only while matrix.toml has a ``[[release]]`` for 0.6.0: records of other
releases (a bisect's probes, a one-off ``python -m kit run``) and records
made before a release left matrix.toml would point at "Sessions not found".
Such a command is given as the kit's own, which runs any release:
``python -m kit run scaling 0.5.0``, with the session's options kept.

A record is data anyone could have written, so only a command of the kit's
own shape is shown (``nox -s ...`` or ``python -m kit ...``, words a shell
reads as words): one ending in ``| sh`` or holding a ``$(...)`` is replaced
by the record's plain session.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Collection

from ..file_names import is_name_part
from ..records import Record, record_jax

_NOX_SESSION = re.compile(r"^nox -s (?P<name>\S+)(?: -- (?P<args>.*))?$")

DRIVER_SESSIONS = ("matrix", "report", "bisect", "plan", "tests")
"""The noxfile's sessions that are not a check on a release."""


def session_names(checks: Collection[str], releases: Collection[str]) -> set[str]:
    """Every nox session the noxfile makes from matrix.toml."""
    return {f"{check}-{release}" for check in checks for release in releases} | set(DRIVER_SESSIONS)


def working_command(record: Record, sessions: Collection[str] | None) -> str:
    """The record's reproduce command, or ``python -m kit run CHECK VERSION ...`` where its nox session is gone.

    ``sessions`` None: not known (a results folder without a matrix): the command as recorded.
    """
    check, release = record.check, record_jax(record)
    plain = f"nox -s {check}-{release}" if is_name_part(check) and is_name_part(release) else ""
    recorded = record.reproduce
    given = recorded if kit_shaped(recorded) else plain
    match = _NOX_SESSION.match(given)
    if sessions is None or match is None or match["name"] in sessions:
        return given
    return f"python -m kit run {check} {release}" + (f" {match['args']}" if match["args"] else "")


_KIT_STARTS = (["nox", "-s"], ["python", "-m", "kit"], ["python3", "-m", "kit"], ["jax-kit"])


def kit_shaped(command: str) -> bool:
    """Is ``command`` one the kit writes: ``nox -s SESSION ...``, ``python -m kit ...`` or ``jax-kit ...``, with no
    shell operator (``|``, ``;``, ``&&``, a redirection), no substitution (``$``, a backtick, outside single quotes) and one line?"""
    if not command or "\n" in command or "\r" in command or _substitutes(command):
        return False
    try:
        words = list(shlex.shlex(command, posix=True, punctuation_chars=True))
    except ValueError:  # an unclosed quote
        return False
    if any(word and all(char in "();<>|&" for char in word) for word in words):
        return False
    return any(words[:len(start)] == start and len(words) > len(start) and is_name_part(words[len(start)])
               for start in _KIT_STARTS)


def _substitutes(command: str) -> bool:
    """Whether a shell would expand something in ``command``: a ``$`` or backtick outside single quotes."""
    quote = ""
    for char in command:
        if quote == "'":
            quote = "" if char == "'" else quote
        elif char in "$`":
            return True
        elif char in "'\"":
            quote = "" if quote == char else (quote or char)
    return False
