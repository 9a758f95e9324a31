"""An audit's checks with one interpreter start per group: the installation prepared once, JAX imported once.

Checks that need the same forced host devices share one warm interpreter
(`repro.known_batch`): JAX is imported once, and each check runs as its own
``__main__`` in a fresh fork of it, so no check sees another's changes and its
exit status is the one ``python SCRIPT`` gives; an entry marked ``isolated``
gets a process of its own. A check past its own timeout is killed there and
answered as timed out (not run again). A group whose process dies or runs out
of time leaves the checks it answered; the rest run alone, each in its own
process (`kit.known.runs.run_entry`). Where JAX cannot start its backend at all
the batch says so, and no check's failure is read as a verdict. ``known --measure`` and ``--verify`` group
each release's entries the same way (`measured_runs`), each answer kept as the
record a run alone writes (`kit.known.batch_records`).
"""

from __future__ import annotations

import signal
from dataclasses import dataclass
from itertools import groupby
from pathlib import Path
from typing import Callable, Sequence

from ..check_settings import script_check
from ..config import Matrix
from ..install import Environment, ExistingPython, release_bytecode_env
from ..json_types import JsonObject
from ..log_events import Log
from ..records import JsonTextError, read_json
from ..run.facts import require_platform
from ..run.runner import RunRequest, prepare
from ..run.script_runs import run_child, scratch_dir, script_env
from .batch_records import BatchRecords
from .catalogue import Entry
from .measured import Measurement, Presence
from .runs import run_entry


def audit_runs(matrix: Matrix, entries: Sequence[Entry], log: Log, records_dir: Path, *, version: str = "",
               existing: ExistingPython | None = None, ready: Callable[[], None] = lambda: None) -> list[Measurement]:
    """Every entry's outcome on one installation, in the order given; ``ready`` is called once the installation is
    prepared, before the first check runs."""
    return _grouped(matrix, entries, log, records_dir, version, existing, ready, recorded=False)


def measured_runs(matrix: Matrix, entries: Sequence[Entry], log: Log, records_dir: Path, *, version: str,
                  ready: Callable[[], None] = lambda: None) -> list[Measurement]:
    """``known --measure`` and ``--verify`` on one release: grouped as `audit_runs` groups them, and each answer
    what `run_entry` gives, its record written (`kit.known.batch_records`). Where the release does not install or
    JAX itself does not import, each entry runs alone, so its record says why as a run alone would."""
    return _grouped(matrix, entries, log, records_dir, version, None, ready, recorded=True)


def _grouped(matrix: Matrix, entries: Sequence[Entry], log: Log, records_dir: Path, version: str,
             existing: ExistingPython | None, ready: Callable[[], None], *, recorded: bool) -> list[Measurement]:
    if not entries:
        return []
    if existing is None:  # as a run alone refuses it (`runner.run_check`): a JAX_PLATFORMS that keeps JAX off cpu
        require_platform("cpu")
    first = entries[0]
    request = RunRequest(check=first.id, version=version, existing=existing,
                         script=script_check(first.id, first.check))
    prepared = prepare(matrix, request, log)
    release = prepared.jax or version
    backend = prepared.backend or "cpu"
    if recorded and (prepared.environment is None or prepared.cannot_test):  # each alone: its record says why
        return [run_entry(matrix, entry, log, records_dir, version=version, existing=existing) for entry in entries]
    if prepared.environment is None:
        return [Measurement(release, backend, Presence.UNTESTED, prepared.problem) for _ in entries]
    env = prepared.environment
    ready()
    read: Callable[[Entry, JsonObject], Measurement] = (
        BatchRecords(matrix, prepared, env, records_dir, version, log).measurement if recorded
        else lambda entry, result: _measurement(result, release, backend, entry.timeout_s))
    answered: dict[str, Measurement] = {}
    for _key, group in groupby(sorted(entries, key=_group_key), key=_group_key):
        members = list(group)
        said = _batch(env, members, backend, log)
        if said.jax_error and not recorded:
            reason = f"JAX itself cannot import and run here ({said.jax_error}), so no check decides anything"
            answered.update({e.id: Measurement(release, backend, Presence.UNTESTED, reason) for e in members})
        for entry in members:
            result = said.results.get(entry.id)
            if result is not None and entry.id not in answered:
                answered[entry.id] = read(entry, result)
            if entry.id not in answered:  # the process died or timed out before it (or JAX did not import, for a
                # measure: a run alone says so in its record): alone, with a record
                answered[entry.id] = run_entry(matrix, entry, log, records_dir, version=version, existing=existing)
    return [answered[entry.id] for entry in entries]


def _group_key(entry: Entry) -> tuple[bool, int, str]:
    return (entry.isolated, entry.host_devices or 0, entry.id if entry.isolated else "")


IMPORT_S = 180
"""What the batch's own limit allows beyond its checks' timeouts: importing JAX once (as the inventory allows it)."""


@dataclass(frozen=True)
class Batch:
    """What one batch's process answered: each entry's result (`repro.known_batch.run_one`), by id; or why JAX
    itself did not import there (then no entry's)."""

    results: dict[str, JsonObject]
    jax_error: str = ""


def _batch(env: Environment, entries: Sequence[Entry], backend: str, log: Log) -> Batch:
    with scratch_dir() as tmp:
        out = tmp / "known-batch.json"
        cmd = [str(env.python), "-m", "repro.known_batch", "--out", str(out),
               "--timeouts", ",".join(str(e.timeout_s) for e in entries), *(str(e.check) for e in entries)]
        # Told what a run alone is told besides (`runner._run_in`): the release's imports only, and its kept bytecode,
        # without which every batch compiled JAX's ~450 modules again (1-1.5 s on this machine).
        extra = {**env.isolating_env(), **release_bytecode_env(env),
                 **script_env(tmp / "unused-result.json", backend, entries[0].host_devices)}
        # Each check is timed in the batch; the batch's own limit is theirs together, and JAX's import besides.
        ended = run_child(cmd, sum(e.timeout_s for e in entries) + IMPORT_S, log, extra, env.pythonpath, echo=False,
                          cwd=tmp)
        try:
            data: object = read_json(out)
        except JsonTextError:
            return Batch({})
    if not isinstance(data, dict):
        return Batch({})
    if data.get("jax_error"):
        return Batch({}, str(data["jax_error"]))
    by_script = {str(e.check): e for e in entries}
    said: dict[str, JsonObject] = {}
    results = data.get("results", [])
    for result in results if isinstance(results, list) else []:
        entry = by_script.get(str(result.get("script"))) if isinstance(result, dict) else None
        if entry is not None and isinstance(result, dict) and _in_time(result, entry):
            said[entry.id] = result
    if ended.timed_out or ended.code not in (0, None):
        log(f"the batch of {len(entries)} checks ended early ({'timed out' if ended.timed_out else ended.code}): "
            f"{len(said)} answered, the rest run alone")
    return Batch(said)


def _in_time(result: JsonObject, entry: Entry) -> bool:
    """Did the check finish within its own timeout (or was it killed at it, in the batch)? One that ran longer
    in the batch without being stopped would have timed out alone: it runs alone, so its outcome is the one a
    run alone gives."""
    if result.get("timed_out") is True:
        return True
    seconds = result.get("seconds")
    return not isinstance(seconds, (int, float)) or seconds <= entry.timeout_s


def _measurement(result: JsonObject, release: str, backend: str, timeout_s: int = 0) -> Measurement:
    """The script protocol on a batch result (a JSON object of repro/known_batch.py's answer): 0 absent, 125 cannot
    tell, other 1-127 present; a signal or a timeout decides nothing."""
    code, said = result.get("exit"), result.get("tail", [])
    tail = [str(line) for line in said] if isinstance(said, list) else []
    last = tail[-1] if tail else ""
    if code is None and result.get("timed_out") is True:
        return Measurement(release, backend, Presence.UNTESTED,
                           f"the script did not finish within {f'{timeout_s} s' if timeout_s else 'its timeout'}, so "
                           f"it decided nothing{f': {last}' if last else ''}")
    if isinstance(code, int) and code < 0:
        name = _signal_name(-code)
        return Measurement(release, backend, Presence.UNTESTED,
                           f"the script was killed by signal {-code}{f' ({name})' if name else ''}, so it decided "
                           f"nothing: {last}")
    if code == 0:
        return Measurement(release, backend, Presence.ABSENT, f"the script exited 0 (unaffected): {last}")
    if code == 125:
        return Measurement(release, backend, Presence.UNTESTED, f"the script exited 125 (cannot tell here): {last}")
    if isinstance(code, int) and 1 <= code <= 127:
        return Measurement(release, backend, Presence.PRESENT, f"the script exited {code} (affected): {last}")
    return Measurement(release, backend, Presence.UNTESTED, f"the script exited {code!r}: {last}")


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return ""
