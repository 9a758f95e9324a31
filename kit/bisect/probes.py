"""One probe: turn a release into an outcome, from a current record or a run.

A check runs through the runner (one record per run, as the matrix keeps
them); a script runs with the release's own python and its exit code is read
the ``git bisect run`` way. Either way the result is an
:class:`~kit.bisect.outcomes.Observation`, kept in the probes file after
every probe, and :func:`~kit.bisect.outcomes.classify` says what it counts as.
"""

from __future__ import annotations

import os
import subprocess
from typing import Sequence

from .. import records, runner
from ..config import Matrix
from ..index import PackageIndex
from ..release import newest_records_here, record_is_current
from .candidates import Candidate
from .options import DEFAULT_SCRIPT_TIMEOUT_S, Log, Options
from .outcomes import Observation, classify, describe, script_observation, settle
from .search import Outcome
from .store import ProbeStore


class Prober:
    """Turns a release into an outcome: records first, then an environment and a run."""

    def __init__(self, matrix: Matrix, options: Options, candidates: Sequence[Candidate], store: ProbeStore,
                 index: PackageIndex, log: Log) -> None:
        self.matrix, self.options, self.store, self.index, self.log = matrix, options, store, index, log
        self.candidates = {c.version: c for c in candidates}
        self._prepared: dict[str, runner.Prepared] = {}
        self._environments: dict[str, str] = {}

    def __call__(self, version: str) -> Outcome:
        observation = self.observe(self.candidates[version])
        self.store.probes[version] = observation.to_json()
        self.store.save()  # after every probe: an interrupted bisect loses at most the one running
        result = classify(observation, self.options.crash)
        flip = f" — flipped: {' → '.join(observation.runs)}" if observation.flipped else ""
        self.log(f"probe jax {version}: {describe(result, bool(self.options.script))} "
                 f"[{observation.source}] {observation.reason}{flip}")
        return result

    def observe(self, candidate: Candidate) -> Observation:
        """Look once (a current record, or a run); re-run an inconclusive look; confirm on request."""
        first = self._record_observation(candidate) or self._run(candidate)
        runs = [first]
        if first.verdict == "inconclusive":
            runs.append(self._run(candidate))  # an inconclusive probe is re-run once before it counts
        if runs[-1].verdict in ("affected", "unaffected"):
            runs += [self._run(candidate) for _ in range(self.options.confirm)]
        observation = settle(runs)
        observation.environment = self._environments.get(candidate.version)
        return observation

    # -- records

    def _newest_records(self) -> dict[str, records.Record]:
        # Read afresh for every probe: a sweep running alongside may have just measured this release.
        newest = newest_records_here(self.matrix.results_dir, self.options.backend)
        return {jax: record for (check, jax), record in newest.items() if check == self.options.check}

    def _record_observation(self, candidate: Candidate) -> Observation | None:
        if not self.options.check:
            return None
        record = self._newest_records().get(candidate.version)
        if record is None:
            return None
        parameters = runner.parameters_for(self.matrix, self._request(candidate.version))
        if not record_is_current(record, parameters, backend=self.options.backend, **candidate.fingerprint_args):
            return None
        return Observation(str(record["status"]), record.get("verdict"), str(record.get("reason") or ""), "record")

    # -- runs

    def _request(self, version: str) -> runner.RunRequest:
        return runner.RunRequest(check=self.options.check or "script", version=version,
                                 backend=self.options.backend, preset=self.options.preset,
                                 find_links=self.options.find_links, timeout_s=self.options.timeout,
                                 reproduce=f"nox -s {self.options.check}-{version}")

    def _prepare(self, version: str) -> runner.Prepared:
        """The release's environment, built at most once per bisect."""
        if version not in self._prepared:
            prepared = runner.prepare(self.matrix, self._request(version), self.log, self.index)
            if prepared.env is not None:
                self._environments[version] = "reused" if prepared.env.reused else "built"
            self._prepared[version] = prepared
        return self._prepared[version]

    def _run(self, candidate: Candidate) -> Observation:
        prepared = self._prepare(candidate.version)
        if self.options.script:
            return self._run_script(prepared)
        record, _path = runner.run_check(self.matrix, self._request(candidate.version), self.log,
                                         self.index, prepared=prepared)
        return Observation(str(record["status"]), record.get("verdict"), str(record.get("reason") or ""))

    def _run_script(self, prepared: runner.Prepared) -> Observation:
        if prepared.env is None:
            return Observation("not-installable", None, f"not installable here: {prepared.problem}")
        assert self.options.script is not None
        timeout = self.options.timeout or DEFAULT_SCRIPT_TIMEOUT_S
        self.log(f"running {prepared.env.python} {self.options.script}")
        code = run_script([str(prepared.env.python), str(self.options.script)], timeout)
        return script_observation(code, timeout)


def run_script(cmd: list[str], timeout: int) -> int | None:
    """Run a user script with output to the terminal; its exit code, or None on timeout.

    Its own session, so a timeout kills the whole process group (a script
    that spawns workers must not leave them behind).
    """
    # As for a check: the repository root is importable, so `from repro import kitcheck` works in a script.
    env = {**os.environ, "PYTHONPATH": str(runner.REPO_ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    proc = subprocess.Popen(cmd, start_new_session=True, env=env)
    try:
        return proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        runner.kill_process_group(proc)
        return None
    except BaseException:
        runner.kill_process_group(proc)  # Ctrl-C: stop the script too
        raise
