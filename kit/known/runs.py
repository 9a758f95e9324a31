"""One catalogue check on one installation, run as any script check is (`kit.run.runner.run_check`).

The release is installed era-correctly (or an existing interpreter used as it
is), the script gets its forced host devices, its timeout and ``$KIT_RESULT``,
and its record is written like every other, so what the catalogue says rests
on records a user can open.
"""

from __future__ import annotations

import shlex
from pathlib import Path

from ..config import Matrix, script_check
from ..install import ExistingPython
from ..log_events import Log
from ..run.runner import RunRequest, run_check
from .catalogue import Entry
from .measured import Measurement, outcome_of


def run_entry(matrix: Matrix, entry: Entry, log: Log, records_dir: Path, *, version: str = "",
              existing: ExistingPython | None = None, echo: bool = False) -> Measurement:
    """The entry's check on ``version`` (installed) or on ``existing``; the outcome as the catalogue counts it."""
    check = script_check(entry.id, entry.check, description=entry.title, host_devices=entry.host_devices,
                         timeout_s=entry.timeout_s)
    where = f"--python {shlex.quote(str(existing.python))}" if existing else version
    request = RunRequest(check=entry.id, version=version, backend="cpu", script=check, existing=existing,
                         records_dir=records_dir, echo=echo,
                         reproduce=f"jax-kit audit {where} --only {entry.id}")
    record, path = run_check(matrix, request, log, check=check)
    backend = str(record.get("requested", {}).get("backend") or "cpu")
    release = str(record.get("requested", {}).get("jax") or version)
    return Measurement(release, backend, outcome_of(record), str(record.get("reason", "")), path.name)
