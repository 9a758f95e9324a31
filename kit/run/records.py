"""The record store: one JSON file per run under ``reports/results/``.

A record is what `kit.run.runner` makes of one check in one environment (the
schema is in docs/architecture.md). This module writes records atomically
under names that never collide, loads them back while reporting (never
raising on) files that are corrupt, truncated or from another schema, and
answers the two questions the rest of the kit asks of them:

* which cell does a record measure (`cell_key`), so that the newest record per
  cell wins and older ones are kept as history (`newest_per_cell`);
* is a cell's record still current (`is_current`), so ``nox -s matrix`` can
  skip it.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import platform
import re
import secrets
import socket
import sys
import tempfile
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from functools import lru_cache
from pathlib import Path
from typing import Any

from packaging.version import InvalidVersion, Version

from repro.environment import cpu_model  # stdlib-only: one reading of the CPU for both halves

from ..atomic_files import TEMP_PREFIX, atomic_write_text, atomic_write_texts, file_mode_mask, fsync_dir
from ..errors import StorageError

__all__ = ["TEMP_PREFIX", "atomic_write_text", "atomic_write_texts"]  # callers that write reports import them from here too

SCHEMA = 1
"""The record schema this kit writes. Readers accept this and older ones."""

Record = dict[str, Any]

# schema N -> function upgrading a schema-N record to schema N + 1. Nothing to
# migrate yet; when SCHEMA becomes 2, add ``1: _upgrade_1_to_2`` here.
MIGRATIONS: dict[int, Callable[[Record], Record]] = {}

STATUSES = ("ran", "not-installable", "crashed", "refused", "timed-out", "unsupported")
"""``refused``: the repro declined a size that does not fit this machine's memory (before any work).
``unsupported``: the release cannot run what was asked here (e.g. processes joined on a CPU client without
cross-process collectives)."""
VERDICTS = ("affected", "unaffected", "inconclusive", None)

_NAME_PART = re.compile(r"[^A-Za-z0-9.]+")


# --------------------------------------------------------------------------
# Identity: which machine, which cell


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


def record_jax(record: Mapping[str, Any]) -> str:
    """The release the record was asked to measure."""
    requested = record.get("requested") or {}
    environment = record.get("environment") or {}
    return str(requested.get("jax") or environment.get("jax") or "unknown")


# matrix.toml asks for "cuda"; jax.default_backend() answers "gpu".
_BACKEND_ALIASES = {"cuda": "gpu", "rocm": "gpu"}


def backend_name(name: str) -> str:
    """A backend as jax names it (cpu, gpu, tpu): matrix.toml's ``cuda`` is jax's ``gpu``."""
    name = name.lower()
    return _BACKEND_ALIASES.get(name, name)


def record_backend(record: Mapping[str, Any]) -> str:
    """The backend measured, as jax names it (cpu, gpu, tpu).

    The requested backend comes first so a run that never started (no
    environment backend) lands in the same cell as the runs that did.
    """
    requested = record.get("requested") or {}
    environment = record.get("environment") or {}
    return backend_name(str(requested.get("backend") or environment.get("backend") or "unknown"))


def record_machine(record: Mapping[str, Any]) -> str:
    host = record.get("host") or {}
    environment = record.get("environment") or {}
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


def cell_key(record: Mapping[str, Any]) -> CellKey:
    """(check, jax release, backend, machine) of one record."""
    return CellKey(
        check=str(record.get("check") or "unknown"),
        jax=record_jax(record),
        backend=record_backend(record),
        machine=record_machine(record),
    )


def created_at(record: Mapping[str, Any]) -> datetime:
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


# --------------------------------------------------------------------------
# Freshness


def environment_fingerprint(
    *,
    python: str | None,
    requirements: Sequence[str],
    exclude_newer: str | None,
    backend: str,
    machine: str,
) -> str:
    """A short hash of what decides the environment a check runs in.

    Two runs with the same fingerprint install the same packages on the same
    machine, so their results are interchangeable. `nox -s matrix` computes
    it from its install plan; `record_fingerprint` computes it from a record.
    """
    payload = json.dumps(
        {
            "python": python,
            "requirements": sorted(requirements),
            "exclude_newer": exclude_newer,
            "backend": backend,
            "machine": machine,
        },
        sort_keys=True,
    )
    return hashlib.sha256(payload.encode()).hexdigest()[:16]


def record_fingerprint(record: Mapping[str, Any]) -> str:
    """`environment_fingerprint` of the environment a record ran in."""
    install = record.get("install") or {}
    requested = record.get("requested") or {}
    return environment_fingerprint(
        python=install.get("python"),
        requirements=list(install.get("requirements") or []),
        exclude_newer=install.get("exclude_newer"),
        backend=str(requested.get("backend") or record_backend(record)),
        machine=record_machine(record),
    )


def is_current(
    record: Mapping[str, Any],
    kit_version: str,
    parameters: Mapping[str, Any],
    environment_fingerprint: str,
) -> bool:
    """True when re-running the record's cell would measure nothing new.

    Same kit version, same environment fingerprint, and every parameter the
    matrix asks for has the value the record used (the record also holds the
    defaults the repro filled in, so extra keys there are fine). A run that
    crashed or timed out is never current: it is worth another try. A
    release that could not be installed stays current until the install
    plan (and so the fingerprint) changes.
    """
    if record.get("status") not in ("ran", "not-installable"):
        return False
    if record.get("kit_version") != kit_version:
        return False
    if record_fingerprint(record) != environment_fingerprint:
        return False
    # A record from before `processes` existed ran one process; a multi-process run
    # measures another cell than a single-process one, configured or not.
    used = {"processes": 1, **(record.get("parameters") or {})}
    if used["processes"] != parameters.get("processes", 1):
        return False
    if record.get("status") == "ran":
        return all(key in used and used[key] == value for key, value in parameters.items())
    return True


# --------------------------------------------------------------------------
# Writing


def record_filename(record: Mapping[str, Any], now: datetime | None = None) -> str:
    """``{check}-{jax}-{backend}-{machine}-{UTC timestamp}-{random}.json``."""
    key = cell_key(record)
    stamp = (now or datetime.now(timezone.utc)).strftime("%Y%m%dT%H%M%S%fZ")
    parts = [key.check, key.jax, key.backend, key.machine[:12], stamp, secrets.token_hex(4)]
    return "-".join(_NAME_PART.sub("_", part).strip("_.") or "x" for part in parts) + ".json"


def write_record(record: Mapping[str, Any], results_dir: Path) -> Path:
    """Write one record atomically under a new unique name; return its path.

    The JSON goes to a temp file in the same folder, is fsynced, and is then
    linked to its final name, which fails instead of replacing an existing
    file (where the file system cannot link, ``os.replace`` onto a name just
    checked to be free is the fallback). A failure at any point leaves no
    temp file behind and no partial record under the final name.
    """
    text = json.dumps(record, indent=2, sort_keys=True, allow_nan=False) + "\n"
    results_dir = Path(results_dir)
    results_dir.mkdir(parents=True, exist_ok=True)
    fd, temp_name = tempfile.mkstemp(dir=results_dir, prefix=TEMP_PREFIX, suffix=".json.part")
    temp = Path(temp_name)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fchmod(handle.fileno(), 0o666 & ~file_mode_mask())  # as any file the user writes, not mkstemp's 0600
            os.fsync(handle.fileno())
        for _attempt in range(100):
            final = results_dir / record_filename(record)
            try:
                os.link(temp, final)
            except FileExistsError:
                continue
            except OSError:
                if final.exists():
                    continue
                os.replace(temp, final)
            fsync_dir(results_dir)
            return final
        raise FileExistsError(f"could not find a free record name in {results_dir}")
    finally:
        with contextlib.suppress(FileNotFoundError):
            temp.unlink()


UNSAVED_DIR_NAME = "jax-kit-unsaved-records"


def save_record(record: Mapping[str, Any], results_dir: Path) -> Path:
    """`write_record`, or, when the results folder cannot take it, keep it elsewhere and say where.

    A full disk or a read-only folder must not lose a run that took minutes:
    the record goes to the temp folder (often another file system), else to
    ``~/.cache``, else is printed to stderr, and `StorageError` names the place.
    """
    try:
        return write_record(record, results_dir)
    except OSError as error:
        why = error.strerror or str(error)
        kept = _keep_unsaved(record)
    where = f"it was kept at {kept}" if kept else "it is printed above (no folder could take it)"
    move = f"mv {kept} {results_dir}/" if kept else f"save the JSON above into {results_dir}/"
    raise StorageError(f"could not write the record into {results_dir} ({why}); {where}",
                       f"free some space (or fix the folder's permissions), then {move}")


def _keep_unsaved(record: Mapping[str, Any]) -> Path | None:
    text = json.dumps(record, indent=2, sort_keys=True, allow_nan=False) + "\n"
    for folder in (Path(tempfile.gettempdir()) / UNSAVED_DIR_NAME, Path.home() / ".cache" / UNSAVED_DIR_NAME):
        path = folder / record_filename(record)
        try:
            atomic_write_text(path, text)
        except OSError:
            continue
        return path
    print(text, file=sys.stderr, flush=True)
    return None


# --------------------------------------------------------------------------
# Loading


@dataclass(frozen=True)
class UnusableFile:
    """A file in the results folder that could not be used, and why."""

    path: Path
    reason: str


@dataclass(frozen=True)
class LoadedRecord:
    path: Path
    record: Record


@dataclass
class LoadResult:
    entries: list[LoadedRecord] = field(default_factory=list)
    unusable: list[UnusableFile] = field(default_factory=list)

    @property
    def records(self) -> list[Record]:
        return [entry.record for entry in self.entries]


class RecordError(ValueError):
    """A record file that cannot be used; the message says why."""


def load_records(results_dir: Path) -> LoadResult:
    """Every usable record under ``results_dir`` (searched recursively).

    Files that are not valid JSON, not a record, or of an unknown schema are
    listed in ``unusable`` with the reason and skipped. Temp files of writes
    still in progress (or abandoned) are ignored. A missing folder is no
    records, not an error.
    """
    result = LoadResult()
    results_dir = Path(results_dir)
    if not results_dir.is_dir():
        return result
    for path in sorted(results_dir.rglob("*.json")):
        if path.name.startswith(TEMP_PREFIX) or not path.is_file():
            continue
        try:
            record = parse_record(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError) as error:
            result.unusable.append(UnusableFile(path, f"unreadable: {error}"))
        except RecordError as error:
            result.unusable.append(UnusableFile(path, str(error)))
        else:
            result.entries.append(LoadedRecord(path, record))
    return result


def parse_record(text: str) -> Record:
    """Decode, migrate to `SCHEMA` and validate one record; `RecordError` if unusable."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as error:
        if not text.strip():
            raise RecordError("empty file") from None
        raise RecordError(
            f"not valid JSON (truncated or corrupt?): {error.msg} (line {error.lineno}, column {error.colno})"
        ) from None
    if not isinstance(data, dict):
        raise RecordError(f"not a record: top level is a JSON {type(data).__name__}, not an object")
    return validate(migrate(data))


def migrate(record: Record) -> Record:
    """Upgrade an older-schema record step by step to `SCHEMA`."""
    schema = record.get("schema")
    if not isinstance(schema, int) or isinstance(schema, bool):
        raise RecordError(f"no usable 'schema' field (found {schema!r})")
    if schema > SCHEMA:
        raise RecordError(
            f"written by a newer kit (schema {schema}; this kit reads up to {SCHEMA}); "
            "upgrade the kit to read it"
        )
    while schema < SCHEMA:
        upgrade = MIGRATIONS.get(schema)
        if upgrade is None:
            raise RecordError(f"schema {schema} is too old and no migration to {schema + 1} exists")
        record = upgrade(dict(record))
        schema += 1
        record["schema"] = schema
    return record


def validate(record: Record) -> Record:
    """Check the fields the report relies on; `RecordError` names the first bad one."""
    problems = list(_field_problems(record))
    if problems:
        raise RecordError("; ".join(problems))
    return record


def _field_problems(record: Mapping[str, Any]) -> Iterable[str]:
    for name in ("check", "status", "created"):
        if not isinstance(record.get(name), str) or not record.get(name):
            yield f"missing or non-text field {name!r}"
    requested = record.get("requested")
    if not isinstance(requested, dict) or not isinstance(requested.get("jax"), str):
        yield "missing 'requested.jax' (which release the record measures)"
    if record.get("status") not in STATUSES and isinstance(record.get("status"), str):
        yield f"unknown status {record.get('status')!r} (expected one of {', '.join(STATUSES)})"
    if record.get("verdict") not in VERDICTS:
        yield f"unknown verdict {record.get('verdict')!r}"
    for name in ("environment", "evidence", "parameters", "install", "host"):
        if name in record and record[name] is not None and not isinstance(record[name], dict):
            yield f"field {name!r} is not an object"
    evidence = record.get("evidence")
    if isinstance(evidence, dict) and "summary" in evidence:
        if evidence["summary"] is not None and not isinstance(evidence["summary"], dict):
            yield "field 'evidence.summary' is not an object"


# --------------------------------------------------------------------------
# Newest per cell


def newest_per_cell(
    entries: Iterable[LoadedRecord],
) -> tuple[dict[CellKey, LoadedRecord], list[LoadedRecord]]:
    """Split records into the newest per cell and the older ones it superseded.

    Ties on ``created`` are broken by file name, so the choice is stable.
    """
    newest: dict[CellKey, LoadedRecord] = {}
    older: list[LoadedRecord] = []
    for entry in sorted(entries, key=lambda e: (created_at(e.record), str(e.path))):
        key = cell_key(entry.record)
        if key in newest:
            older.append(newest[key])
        newest[key] = entry
    return newest, older
