"""One probe: turn a release into an outcome, from what is known or from a run.

Known first: the probe cache (any earlier bisect's probe of the same thing on
the same release, Python and jaxlib), then, for a check, a current record of
the matrix. Otherwise the release is resolved and its environment built or
reused (once per bisect), and the check runs through the runner (writing a
record, as the matrix does) or the script runs with the release's own python,
its exit code read the ``git bisect run`` way. Either way the result is an
:class:`~kit.bisect.outcomes.Observation`, kept in the probe cache at once,
and :func:`~kit.bisect.outcomes.classify` says what it counts as.
"""

from __future__ import annotations

import dataclasses
import time
from datetime import datetime, timezone
from typing import Any, Mapping, Sequence

from .. import records
from ..config import Matrix
from ..install.environment import Prepared
from ..install.index import PackageIndex
from ..run import runner
from .candidates import Candidate
from .options import DEFAULT_SCRIPT_TIMEOUT_S, Log, Options
from .outcomes import Observation, classify, describe, script_observation, settle
from .probe_cache import ProbeCache, ProbeKey
from .search import Outcome


class Prober:
    """Turns a release into an outcome; remembers every observation it made or found."""

    def __init__(self, matrix: Matrix, options: Options, candidates: Sequence[Candidate], cache: ProbeCache,
                 subject: Mapping[str, Any], name: str, index: PackageIndex, log: Log) -> None:
        self.matrix, self.options, self.cache, self.index, self.log = matrix, options, cache, index, log
        self.subject, self.name = subject, name
        self.candidates = {c.version: c for c in candidates}
        self.observations: dict[str, Observation] = {}
        self.ran_now: list[str] = []
        """Releases this bisect ran (not found in the cache or the records)."""
        self._prepared: dict[str, Prepared] = {}
        self._environments: dict[str, str] = {}
        """``built`` or ``reused``, per release this bisect prepared."""

    @property
    def timeout(self) -> int:
        if self.options.timeout:
            return self.options.timeout
        if self.options.check:
            return self.matrix.check(self.options.check).timeout_s
        return DEFAULT_SCRIPT_TIMEOUT_S

    def __call__(self, version: str) -> Outcome:
        observation = self.observe(self.candidates[version])
        self.observations[version] = observation
        result = classify(observation, self.options.crash)
        flip = f" — flipped: {' → '.join(observation.runs)}" if observation.flipped else ""
        self.log(f"probe {self.name_of(version)}: {describe(result, bool(self.options.script))} "
                 f"[{observation.source}] {observation.reason}{flip}")
        return result

    def observe(self, candidate: Candidate) -> Observation:
        """What the release does: known already, or measured now (and then remembered)."""
        if candidate.yanked is not None:
            return Observation("yanked", None, f"yanked from the index ({candidate.yanked}): not probed", "index")
        if candidate.problem:
            return Observation("not-installable", None, f"not installable here: {candidate.problem}", "index",
                               jaxlib=candidate.jaxlib)
        known = self._cached(candidate, candidate.python, candidate.jaxlib)
        if known is not None:
            return known  # settled when it was made: an inconclusive one had its re-run then
        recorded = self._record_observation(candidate)
        if recorded is not None and recorded.verdict != "inconclusive":
            return recorded
        started = time.monotonic()
        prepared = self._prepare(candidate.version)
        python = prepared.resolution.python if prepared.resolution else None
        jaxlib = prepared.resolution.pins.get("jaxlib") if prepared.resolution else candidate.jaxlib
        if (python, jaxlib) != (candidate.python, candidate.jaxlib):
            known = self._cached(candidate, python, jaxlib)  # the resolver chose otherwise than the metadata said
            if known is not None:
                return known
        observation = dataclasses.replace(
            self._looks(candidate, prepared, recorded), python=python, jaxlib=jaxlib, timeout_s=self.timeout,
            environment=self._environments.get(candidate.version),
            seconds=round(time.monotonic() - started, 1), by=self.name,
            ran_at=datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"))
        self.cache.put(self._key(candidate.version, python, jaxlib), observation)
        self.ran_now.append(candidate.version)
        return observation

    def known_outcomes(self) -> dict[str, Outcome]:
        """What the probe cache already says about these candidates, as the search's starting cache.

        Handed to the search before it starts, so it narrows straight to the
        known change instead of picking midpoints it would then have to run.
        """
        known: dict[str, Outcome] = {}
        for candidate in self.candidates.values():
            if candidate.yanked is not None or candidate.problem:
                continue
            cached = self._cached(candidate, candidate.python, candidate.jaxlib)
            if cached is not None:
                self.observations[candidate.version] = cached
                known[candidate.version] = classify(cached, self.options.crash)
        return known

    def name_of(self, version: str) -> str:
        """How a log line names what is probed."""
        return f"jax {version}"

    def _key(self, version: str, python: str | None, jaxlib: str | None) -> ProbeKey:
        return ProbeKey(self.subject, version, self.options.backend, python, jaxlib, records.machine_id())

    def _cached(self, candidate: Candidate, python: str | None, jaxlib: str | None) -> Observation | None:
        cached = self.cache.get(self._key(candidate.version, python, jaxlib), self.timeout)
        return dataclasses.replace(cached, source="cache") if cached is not None else None

    def _looks(self, candidate: Candidate, prepared: Prepared, first: Observation | None) -> Observation:
        """Look once (or start from an inconclusive record); re-run a check's inconclusive look; confirm on request."""
        runs = [first or self._run(candidate, prepared)]
        if runs[0].verdict == "inconclusive" and self.options.check:
            runs.append(self._run(candidate, prepared))  # an inconclusive check is re-run once before it counts
        if runs[-1].verdict in ("affected", "unaffected"):
            runs += [self._run(candidate, prepared) for _ in range(self.options.confirm)]
        return settle(runs)

    # -- records

    def _record_observation(self, candidate: Candidate) -> Observation | None:
        if not self.options.check or not self.cache.read:
            return None
        # Read afresh for every probe: a sweep running alongside may have just measured this release.
        parameters = runner.parameters_for(self.matrix, self._request(candidate.version))
        newest = records.newest_records_here(self.matrix.results_dir, self.options.backend,
                                             {self.options.check: parameters}, self.options.preset)
        record = newest.get((self.options.check, candidate.version))
        if record is None or not records.is_current(record, parameters, backend=self.options.backend,
                                                    preset=self.options.preset, **candidate.fingerprint_args):
            return None
        install = record.get("install") or {}
        return Observation(str(record["status"]), record.get("verdict"), str(record.get("reason") or ""), "record",
                           python=install.get("python"), jaxlib=(install.get("resolved") or {}).get("jaxlib"),
                           ran_at=str(record.get("created") or ""), seconds=float(record.get("duration_s") or 0))

    # -- runs

    def _request(self, version: str) -> runner.RunRequest:
        return runner.RunRequest(check=self.options.check or "script", version=version,
                                 backend=self.options.backend, preset=self.options.preset,
                                 find_links=self.options.find_links, timeout_s=self.options.timeout,
                                 reproduce=f"nox -s {self.options.check}-{version}",
                                 first_python=self.candidates[version].python)

    def _prepare(self, version: str) -> Prepared:
        """The release resolved and its environment built or reused, at most once per bisect."""
        if version not in self._prepared:
            prepared = runner.prepare(self.matrix, self._request(version), self.log, self.index)
            if prepared.environment is not None:
                self._environments[version] = prepared.environment.obtained
            self._prepared[version] = prepared
        return self._prepared[version]

    def _run(self, candidate: Candidate, prepared: Prepared) -> Observation:
        if self.options.script:
            return self._run_script(prepared)
        record, _path = runner.run_check(self.matrix, self._request(candidate.version), self.log,
                                         self.index, prepared=prepared)
        return Observation(str(record["status"]), record.get("verdict"), str(record.get("reason") or ""))

    def _run_script(self, prepared: Prepared) -> Observation:
        if prepared.environment is None:
            return Observation("not-installable", None, f"not installable here: {prepared.problem}")
        assert self.options.script is not None
        python = prepared.environment.python
        self.log(f"running {python} {self.options.script}")
        code = runner.run_child([str(python), str(self.options.script)], self.timeout, self.log,
                                pythonpath=prepared.environment.pythonpath).code
        return script_observation(code, self.timeout)
