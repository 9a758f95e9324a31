"""Whose environment a record ran in: the kit's build of a release, or a user's own interpreter.

A record made with an interpreter the kit did not build (``--python``, an
``[[environment]]`` of matrix.toml) says so: ``install.environment`` is
``existing``, with the interpreter, every installed package and their
`kit.records.packages_fingerprint`. It measures that installation, not the
kit's build of the release it holds, so it is never taken for one
(`existing_interpreter`; `kit.records.currency.origin_difference` makes it
ad-hoc). A named environment's records make its own row, one per
`EnvironmentCell` (`newest_per_environment`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from .cells import newest_by, record_backend, record_machine
from .record import LoadedRecord
from ..json_types import as_object

EXISTING = "existing"
"""``install.environment`` of a record made with an interpreter the kit did not build."""


def existing_interpreter(record: Mapping[str, object]) -> str | None:
    """The interpreter a record ran with when it was a user's own (``--python``, ``[[environment]]``); else None."""
    install = record.get("install")
    if not isinstance(install, dict) or install.get("environment") != EXISTING:
        return None
    return str(install.get("interpreter") or "an existing interpreter")


def environment_name(record: Mapping[str, object]) -> str | None:
    """The ``[[environment]]`` of matrix.toml a record ran in; None for any other record."""
    if existing_interpreter(record) is None:
        return None
    name = as_object(record.get("install")).get("name")
    return name if isinstance(name, str) and name else None


@dataclass(frozen=True, order=True)
class EnvironmentCell:
    """What one record of a named environment measures: its newest per cell makes the environment's row.

    The JAX release is not part of it: the row shows what the environment holds
    now, and a record from before an upgrade is superseded like any older record.
    """

    check: str
    environment: str
    backend: str
    machine: str


def environment_cell(record: Mapping[str, object]) -> EnvironmentCell:
    """(check, environment name, backend, machine) of a named environment's record."""
    return EnvironmentCell(check=str(record.get("check") or "unknown"),
                           environment=environment_name(record) or existing_interpreter(record) or "",
                           backend=record_backend(record), machine=record_machine(record))


def newest_per_environment(entries: Iterable[LoadedRecord],
                           ) -> tuple[dict[EnvironmentCell, LoadedRecord], list[LoadedRecord]]:
    """As `kit.records.newest_per_cell`, per `EnvironmentCell`: the newest wins, the older are history."""
    return newest_by(entries, environment_cell)
