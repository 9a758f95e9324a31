"""The Reproduce cell of a matrix row: a command that works as written.

A record says how it was made (``nox -s scaling-0.6.0``). That session exists
only while matrix.toml has a ``[[release]]`` for 0.6.0: records of other
releases (a bisect's probes, a one-off ``python -m kit run``) and records
made before a release left matrix.toml would point at "Sessions not found".
Such a command is given as the kit's own, which runs any release:
``python -m kit run scaling 0.5.0``, with the session's options kept.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping
from typing import Any

from ..records import record_jax

_NOX_SESSION = re.compile(r"^nox -s (?P<name>\S+)(?: -- (?P<args>.*))?$")

DRIVER_SESSIONS = ("matrix", "report", "bisect", "plan", "tests")
"""The noxfile's sessions that are not a check on a release."""


def session_names(checks: Collection[str], releases: Collection[str]) -> set[str]:
    """Every nox session the noxfile makes from matrix.toml."""
    return {f"{check}-{release}" for check in checks for release in releases} | set(DRIVER_SESSIONS)


def working_command(record: Mapping[str, Any], sessions: Collection[str] | None) -> str:
    """The record's reproduce command, or ``python -m kit run CHECK VERSION ...`` where its nox session is gone.

    ``sessions`` None: not known (a results folder without a matrix): the command as recorded.
    """
    check, release = str(record.get("check")), record_jax(record)
    given = str(record.get("reproduce") or f"nox -s {check}-{release}")
    match = _NOX_SESSION.match(given)
    if sessions is None or match is None or match["name"] in sessions:
        return given
    return f"python -m kit run {check} {release}" + (f" {match['args']}" if match["args"] else "")
