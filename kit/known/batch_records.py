"""A batched check's answer kept as the record `run_entry` writes: the same reason, the same outcome, its own file.

``known --measure`` and ``--verify`` run the checks that share a release in one
interpreter (`kit.known.batch`), yet every entry on every release keeps its
record under ``reports/known/results``, which ``known/measured/ID.json`` names.
The exit code and the last lines a batch gives are read as the runner reads a
script run alone (`kit.run.script_runs.script_fields`: the protocol's exit, then the
failure classed), JAX is asked whether it runs after a failure (once per
installation: the batch's interpreter is one), and the record is made from the
same head, parameters and identity as `kit.run.runner.run_check` makes it.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from repro.contract import json_safe

from .. import records
from ..config import Matrix
from ..install import Environment, Prepared
from ..json_types import JsonObject
from ..log_events import Log
from ..records import RunOutcome, new_record
from ..run import failures
from ..run.child_processes import Ended
from ..run.facts import host_facts, job_facts
from ..run.runner import parameters_for, record_head
from ..run.script_runs import scratch_dir, script_fields, unless_jax_failed
from ..text_bounds import bound_record
from ..user_paths import shown_path
from .catalogue import Entry
from .measured import Measurement
from .runs import entry_check, entry_request, measurement_of


@dataclasses.dataclass
class BatchRecords:
    """The records of one installation's batched checks (``version`` as the command named it)."""

    matrix: Matrix
    prepared: Prepared
    environment: Environment
    records_dir: Path
    version: str
    log: Log
    jax_runs: bool = False
    """JAX was found to run here after a failure: the next failure in the same installation need not ask again."""

    def measurement(self, entry: Entry, result: JsonObject) -> Measurement:
        """``result`` (`repro.known_batch.run_one`'s answer for the entry's script) as a record, and its outcome."""
        check = entry_check(entry)
        request = entry_request(entry, self.records_dir, version=self.version)
        params = parameters_for(self.matrix, request, check)
        head = record_head(request, params, self.prepared)
        outcome = self._outcome(entry, result)
        environment = dict(outcome.environment or {})
        environment["python"] = environment.get("python") or head.install.get("python")
        executable = environment.get("executable")
        if isinstance(executable, str):  # records are pasted into bug threads: no absolute path of this machine
            environment["executable"] = shown_path(executable, self.matrix.path.parent)
        made = new_record(head, outcome.ran_on(environment), parameters=dict(params),
                          slurm=job_facts(), duration_s=_seconds(result))
        record: JsonObject = json_safe(bound_record(made))
        path = records.save_record(record, self.records_dir)
        return measurement_of(record, path, self.version)

    def _outcome(self, entry: Entry, result: JsonObject) -> RunOutcome:
        """As `kit.run.script_runs.run_script` reads the same exit and output of the script run alone."""
        said, code = result.get("tail"), result.get("exit")
        ended = Ended(code if isinstance(code, int) else None, [str(line) for line in said] if isinstance(said, list)
                      else [])
        env, check = self.environment, entry_check(entry)
        assert check.script is not None
        with scratch_dir() as tmp:  # no KIT_RESULT: the batch's scripts write none (repro/known_batch.py)
            outcome, _ = script_fields(ended, tmp / "kit-result.json", entry.timeout_s, None, env)
        if failures.failed(ended.code):
            not_source = failures.source_problem(check.script)
            if not_source:  # Python says so without a traceback: a plain exit 1
                outcome = failures.not_source(outcome, not_source)
            if not self.jax_runs:
                asked = unless_jax_failed(outcome, env, self.log)
                self.jax_runs = asked is outcome  # unchanged: JAX runs here, for every check of the batch
                outcome = asked
        facts: JsonObject = {**{k: env.versions.get(k) for k in ("jax", "jaxlib", "numpy", "scipy")},
                             "python": env.python_version, "backend": "cpu", "device_count": entry.host_devices or None}
        return outcome.ran_on({**host_facts(None), **facts})


def _seconds(result: JsonObject) -> float:
    seconds = result.get("seconds")
    return round(float(seconds), 2) if isinstance(seconds, (int, float)) else 0.0
