"""The record store: one JSON file per run under ``reports/results/``.

Records are written atomically under names that never collide
(`write_record`; `save_record` keeps a record elsewhere, and says where, when
the folder cannot take it), and loaded back (`load_records`) while listing,
never raising on, files that are corrupt, truncated, hostile or from another
schema. What a record holds is `kit.records.schema`; which cell it measures is
`kit.records.cells`; whether it is still current is `kit.records.currency`.
"""

from __future__ import annotations

import contextlib
import os
import re
import secrets
import sys
import tempfile
from collections.abc import Mapping
from datetime import datetime, timezone
from pathlib import Path

from repro.contract import strict_json

from ..atomic_files import TEMP_PREFIX, atomic_write_text, file_mode_mask, fsync_dir, remove_abandoned_temps
from ..errors import StorageError
from .cells import cell_key
from .origin import EXISTING, environment_name, existing_interpreter
from .json_text import JsonTextError, read_text
from .record import LoadedRecord, LoadResult, Record
from .schema import RecordError, UnusableFile, parse_record

_NAME_PART = re.compile(r"[^A-Za-z0-9.]+")


# --------------------------------------------------------------------------
# Writing


def record_filename(record: Mapping[str, object], now: datetime | None = None) -> str:
    """``{check}-{jax}-{backend}-{machine}-{UTC timestamp}-{random}.json``.

    A record of an existing interpreter has its environment's name, or
    ``existing``, after the release, so a listing never shows it as the kit's
    build of that release.
    """
    key = cell_key(record)
    stamp = (now or datetime.now(timezone.utc)).strftime("%Y%m%dT%H%M%S%fZ")
    where = [environment_name(record) or EXISTING] if existing_interpreter(record) else []
    parts = [key.check, key.jax, *where, key.backend, key.machine[:12], stamp, secrets.token_hex(4)]
    return "-".join(_NAME_PART.sub("_", part).strip("_.") or "x" for part in parts) + ".json"


def write_record(record: Mapping[str, object], results_dir: Path) -> Path:
    """Write one record atomically under a new unique name; return its path.

    The JSON goes to a temp file in the same folder, is fsynced, and is then
    linked to its final name, which fails instead of replacing an existing
    file (where the file system cannot link, ``os.replace`` onto a name just
    checked to be free is the fallback). A failure at any point leaves no
    temp file behind and no partial record under the final name.
    """
    text = strict_json(record)
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
            remove_abandoned_temps(results_dir)  # what writers killed mid-write left here
            return final
        raise FileExistsError(f"could not find a free record name in {results_dir}")
    finally:
        with contextlib.suppress(FileNotFoundError):
            temp.unlink()


UNSAVED_DIR_NAME = "jax-kit-unsaved-records"
"""How the folder a record goes to when its results folder refuses it begins: ``jax-kit-unsaved-records-XXXXXXXX``."""

_UNSAVED: dict[Path, Path] = {}
"""Per parent folder, this process's folder of unsaved records (one per process, so a sweep's go together)."""


def save_record(record: Mapping[str, object], results_dir: Path) -> Path:
    """`write_record`, or, when the results folder cannot take it, keep it elsewhere and say where.

    A full disk or a read-only folder must not lose a run that took minutes:
    the record goes to a folder made fresh in the temp folder (often another
    file system), else in ``~/.cache``, else is printed to stderr, and
    `StorageError` names the place.
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


def _keep_unsaved(record: Mapping[str, object]) -> Path | None:
    text = strict_json(record)
    for parent in (Path(tempfile.gettempdir()), Path.home() / ".cache"):
        try:
            path = _unsaved_folder(parent) / record_filename(record)
            atomic_write_text(path, text)
        except OSError:
            continue
        return path
    print(text, file=sys.stderr, flush=True)
    return None


def _unsaved_folder(parent: Path) -> Path:
    """A folder made fresh (`mkdtemp`: a new name, mode 0700) for this process's unsaved records.

    Never a fixed name: another user of a shared temp folder could make
    ``/tmp/jax-kit-unsaved-records`` first, or a link there to a folder of
    theirs, and receive the records.
    """
    folder = _UNSAVED.get(parent)
    if folder is None or not folder.is_dir():
        parent.mkdir(parents=True, exist_ok=True)  # ~/.cache on a fresh account
        folder = _UNSAVED[parent] = Path(tempfile.mkdtemp(prefix=UNSAVED_DIR_NAME + "-", dir=parent))
    return folder


# --------------------------------------------------------------------------
# Loading


def load_records(results_dir: Path) -> LoadResult:
    """Every usable record under ``results_dir`` (searched recursively).

    Files that cannot be used (not JSON, not a record, an unknown schema,
    hostile content, too large) are listed in ``unusable`` with one reason
    each and skipped: loading never raises on what a file holds. Temp files
    of writes still in progress (or abandoned) are ignored. A missing folder
    is no records, not an error.
    """
    result = LoadResult()
    results_dir = Path(results_dir)
    if not results_dir.is_dir():
        return result
    for path in sorted(results_dir.rglob("*.json")):
        if path.name.startswith(TEMP_PREFIX) or not path.is_file():
            continue
        try:
            record = parse_record(read_text(path))
        except (JsonTextError, RecordError) as error:
            result.unusable.append(UnusableFile(path, str(error)))
        else:
            result.entries.append(LoadedRecord(path, Record(record)))
    return result
