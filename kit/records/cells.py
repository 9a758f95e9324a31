"""Which cell a record measures, on which machine, and which record of a cell is the newest.

A cell is (check, JAX release, backend, machine): the newest record per cell
wins and older ones are kept as history (`newest_per_cell`).
"""

from __future__ import annotations

import hashlib
import socket
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime, timezone
from functools import lru_cache
from pathlib import Path
from typing import Callable, Hashable, TypeVar

from packaging.version import InvalidVersion, Version

from repro.environment import cpu_model  # stdlib-only: one reading of the CPU for both halves

from ..json_types import as_object
from .record import LoadedRecord

K = TypeVar("K", bound=Hashable)


@lru_cache(maxsize=1)
def machine_id() -> str:
    """A stable 12-hex-digit name for this machine.

    Hashes /etc/machine-id where there is one (stable across reboots and
    hostname changes); otherwise hostname plus CPU model. The hash keeps the
    raw id out of records that may be pasted into public issues.
    """
    for candidate in ("/etc/machine-id", "/var/lib/dbus/machine-id"):
        try:
            raw = Path(candidate).read_text(encoding="utf-8").strip()
        except OSError:
            continue
        if raw:
            return hashlib.sha256(raw.encode()).hexdigest()[:12]
    fallback = f"{socket.gethostname()}|{cpu_model()}"
    return hashlib.sha256(fallback.encode()).hexdigest()[:12]


@dataclass(frozen=True, order=True)
class CellKey:
    """What one record measures; the newest record per key wins.

    The device kind is not part of the key: on one machine a backend has one
    kind of device, and a record for a release that could not be installed
    has no device at all but must still replace (or be replaced by) the runs
    of that release on that machine.
    """

    check: str
    jax: str
    backend: str
    machine: str


def record_jax(record: Mapping[str, object]) -> str:
    """The release the record was asked to measure."""
    requested = as_object(record.get("requested"))
    environment = as_object(record.get("environment"))
    return str(requested.get("jax") or environment.get("jax") or "unknown")


# matrix.toml asks for "cuda"; jax.default_backend() answers "gpu".
_BACKEND_ALIASES = {"cuda": "gpu", "rocm": "gpu"}


def backend_name(name: str) -> str:
    """A backend as jax names it (cpu, gpu, tpu): matrix.toml's ``cuda`` is jax's ``gpu``."""
    name = name.lower()
    return _BACKEND_ALIASES.get(name, name)


def record_backend(record: Mapping[str, object]) -> str:
    """The backend measured, as jax names it (cpu, gpu, tpu).

    The requested backend comes first so a run that never started (no
    environment backend) lands in the same cell as the runs that did.
    """
    requested = as_object(record.get("requested"))
    environment = as_object(record.get("environment"))
    return backend_name(str(requested.get("backend") or environment.get("backend") or "unknown"))


def record_machine(record: Mapping[str, object]) -> str:
    host = as_object(record.get("host"))
    environment = as_object(record.get("environment"))
    return str(
        host.get("machine_id")
        or host.get("name")
        or environment.get("host")
        or environment.get("hostname")
        or "unknown"
    )


def release_key(release: str) -> tuple[int, Version | str]:
    """Sort key: valid versions by `packaging.version.Version`, the rest after, by name."""
    try:
        return (0, Version(release))
    except InvalidVersion:
        return (1, release)


def cell_key(record: Mapping[str, object]) -> CellKey:
    """(check, jax release, backend, machine) of one record."""
    return CellKey(
        check=str(record.get("check") or "unknown"),
        jax=record_jax(record),
        backend=record_backend(record),
        machine=record_machine(record),
    )


def created_at(record: Mapping[str, object]) -> datetime:
    """When the record was made (UTC); records without a date sort oldest."""
    raw = record.get("created")
    if isinstance(raw, str):
        try:
            parsed = datetime.fromisoformat(raw.replace("Z", "+00:00"))
        except ValueError:
            pass
        else:
            if parsed.tzinfo is None:
                parsed = parsed.replace(tzinfo=timezone.utc)
            return parsed
    return datetime.min.replace(tzinfo=timezone.utc)


def newest_per_cell(
    entries: Iterable[LoadedRecord],
) -> tuple[dict[CellKey, LoadedRecord], list[LoadedRecord]]:
    """Split records into the newest per cell and the older ones it superseded."""
    return newest_by(entries, cell_key)


def newest_by(entries: Iterable[LoadedRecord], key: Callable[[Mapping[str, object]], K],
              ) -> tuple[dict[K, LoadedRecord], list[LoadedRecord]]:
    """The newest record per ``key(record)``, and the older ones it superseded.

    Ties on ``created`` are broken by file name, so the choice is stable.
    """
    newest: dict[K, LoadedRecord] = {}
    older: list[LoadedRecord] = []
    for entry in sorted(entries, key=lambda e: (created_at(e.record), str(e.path))):
        cell = key(entry.record)
        if cell in newest:
            older.append(newest[cell])
        newest[cell] = entry
    return newest, older
