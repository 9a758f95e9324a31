"""One catalogue check on one installation, run as any script check is (`kit.run.runner.run_check`).

The release is installed era-correctly (or an existing interpreter used as it
is), the script gets its forced host devices, its timeout and ``$KIT_RESULT``,
and its record is written like every other, so what the catalogue says rests
on records a user can open. Compiled for a target (an entry's ``targets``), the
release is installed with the chip's compiler and the script is told the
target (``KIT_TARGET``, `repro.known_target`): nothing runs on the chip.
"""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Mapping

from ..check_settings import Check
from ..check_settings import script_check
from ..config import Matrix
from ..install import ExistingPython
from ..log_events import Log
from ..records import Record
from ..json_types import as_list
from ..run.runner import RunRequest, run_check
from ..targets import Target
from .catalogue import Entry
from .measured import Measurement, outcome_of


def run_entry(matrix: Matrix, entry: Entry, log: Log, records_dir: Path, *, version: str = "",
              existing: ExistingPython | None = None, echo: bool = False, target: Target | None = None) -> Measurement:
    """The entry's check on ``version`` (installed) or on ``existing``, compiled for ``target`` where given; the
    outcome as the catalogue counts it."""
    check = entry_check(entry)
    request = entry_request(entry, records_dir, version=version, existing=existing, echo=echo, target=target)
    written, path = run_check(matrix, request, log, check=check)
    return measurement_of(written, path, version, target)


def entry_check(entry: Entry) -> Check:
    """The entry's script as a check: its devices, its timeout (the target it is compiled for travels in the run
    request, `entry_request`, and becomes text in its record)."""
    return script_check(entry.id, entry.check, description=entry.title, host_devices=entry.host_devices,
                        timeout_s=entry.timeout_s)


def entry_request(entry: Entry, records_dir: Path, *, version: str = "", existing: ExistingPython | None = None,
                  echo: bool = False, target: Target | None = None) -> RunRequest:
    """What the runner is asked for the entry, and the command its record says reproduces it."""
    where = f"--python {shlex.quote(str(existing.python))}" if existing else version
    aimed = f" --target {target.name}" if target else ""
    # A target installs its compiler as the release's extra (jax[tpu]); JAX itself runs on CPU.
    backend = target.install_extra if target and existing is None else "cpu"
    return RunRequest(check=entry.id, version=version, backend=backend, script=entry_check(entry),
                      existing=existing, records_dir=records_dir, echo=echo, target=target,
                      reproduce=f"jax-kit audit {where}{aimed} --only {entry.id}")


def measurement_of(written: Mapping[str, object], path: Path, version: str, target: Target | None = None) -> Measurement:
    """A record of the entry's run as the catalogue counts it: its outcome, its reason, its file's name."""
    record = Record.of(written)
    release = str(record.requested.get("jax") or version)
    if target is not None:
        return Measurement(release, target.platform, outcome_of(record), compiled_reason(record, target), path.name,
                           target=target.name)
    backend = str(record.requested.get("backend") or "cpu")
    return Measurement(release, backend, outcome_of(record), str(record.get("reason", "")), path.name)


def compiled_reason(record: Mapping[str, object], target: Target) -> str:
    """A target run's reason with what its check said last (which compile, which batch), and that nothing ran."""
    reason = str(record.get("reason", ""))
    tail = as_list(Record.of(record).evidence.get("output_tail"))
    said = str(tail[-1]) if tail else ""
    if target.compiled_not_run not in said:
        said = f"{said}; {target.compiled_not_run}" if said else target.compiled_not_run
    return f"{reason}: {said}"
