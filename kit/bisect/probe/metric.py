"""``--metric``: bisect where a measured metric stepped, from repeated samples and a rank test.

Each probe runs the check or the script through the runner (a record, as the
matrix keeps them; a script's KIT_RESULT) and reads one metric's samples. The bounds, run in turns for
``BOUND_ROUNDS`` rounds, set the baseline and which way is worse
(:func:`kit.metrics.baseline_from_rounds`: the step must show in every round,
since one run's samples share that moment's machine load); each probe runs
``PROBE_RUNS`` times and is judged by :func:`kit.metrics.decide_runs`: bad,
good, or within noise. A probe within noise runs once more and its samples are
pooled before it counts; one still within noise is ``inconclusive`` and the
search steps around it (a skip, named in the report). The verdict a metric probe gets is its decision, so the
one mapping to good/bad/skip (:func:`kit.bisect.outcomes.classify`) and the
pure search need nothing new.
"""

from __future__ import annotations

import time
from datetime import datetime, timezone
from typing import Mapping

from packaging.version import Version

from ...records import Source, Status, Verdict
from ... import metrics
from ...errors import ArchiveUnreachable, UsageError
from ...json_types import as_list, as_object
from ...log_events import Log
from ..bounds import Bounds
from ..candidates import Candidate
from .metric_samples import MetricSamples
from .metric_summary import MetricStep, MetricSummary
from ..specs import HowToSearch
from ..observation import Found, Installed, Observation
from ..outcomes import describe, metric_verdict
from .probes import Look, Subject, install_unknown
from ..search import ProbeOutcome

# Runs of each bound, taken in turns, and runs per probe: samples of one run share its moment's load.
BOUND_ROUNDS = 3
PROBE_RUNS = 2


class MetricJudge:
    """Measures a metric per candidate; once the bounds set the baseline, a probe is a step decision.

    The bounds are releases, measured on the release subject the search
    starts with; a commit probe is judged against runs of the same --good
    release, so the one judge serves both phases.
    """

    def __init__(self, search: HowToSearch, script: bool, name: str, log: Log, samples: MetricSamples | None = None,
                 pins: tuple[str, ...] = ()) -> None:
        self.metric, self.factor, self.script, self.name, self.log = search.metric or "", search.factor, script, name, log
        """``--metric`` and ``--factor``; ``script``: a ``--script``'s words (pass/fail) and not a check's."""
        self.pins = list(pins)
        """``--pin``s every run held: on each observation, where the report says what the bisect held."""
        self.samples = samples
        """Where measured samples are kept so an interrupted bisect resumes (None: nothing kept)."""
        self.base: metrics.Baseline | None = None
        self.unit = ""
        self.better = "lower"
        """What the metric itself declares; the bounds decide the direction, this only words a warning."""
        self.good = ""
        self.bounds_subject: Subject | None = None
        """Where the --good release is measured (the release subject of the bounds)."""

    def line(self, name: str, observation: Observation, result: ProbeOutcome) -> str:
        outcome = describe(result, self.script)
        return f"probe {name}: {outcome} [{observation.came_from.shown}] {observation.found.reason}"

    def remembered(self, subject: Subject, key: str) -> Observation | None:
        """None: a metric is judged against this run's bounds, so no earlier probe counts without a run."""
        return None

    def summary(self, observations: Mapping[str, Observation]) -> MetricSummary | None:
        return metric_summary(self, observations)

    def observe(self, subject: Subject, candidate: Candidate) -> Look:
        """Runs of the probe, each right after a run of --good; decided together and pair by pair.

        Within noise after ``PROBE_RUNS`` pairs, one more pair runs and
        everything is pooled. Pairs kept by an interrupted run of this bisect
        count first (kit/bisect/probe/metric_samples.py); only the rest are measured.
        """
        environment = (candidate.python, candidate.jaxlib)
        kept = self.samples.pairs(candidate.version, environment) if self.samples else []
        runs: list[list[float]] = []
        goods: list[list[float]] = []
        spent, reused_s, last = 0.0, 0.0, None
        decision: metrics.Decision | None = None
        for index in range(PROBE_RUNS + 1):
            if index < len(kept):
                good, probe, seconds = kept[index]
                reused_s += seconds
            else:
                started = time.monotonic()
                good = self._bound_samples(self.good)[0]
                last = self.measure(subject, candidate)
                if last.found.status != Status.RAN:
                    return self._costed(subject, candidate.version, False, spent + time.monotonic() - started, last)
                probe, seconds = list(last.found.samples), time.monotonic() - started
                spent += seconds
                if self.samples is not None:
                    self.samples.add_pair(candidate.version, environment, good, probe, seconds)
            goods.append(good)
            runs.append(probe)
            if len(runs) >= PROBE_RUNS:
                decision = metrics.decide_runs(self.base_or_fail, runs, goods)
                if decision.call is not metrics.Call.UNDECIDED:
                    break
        assert decision is not None
        reason = f"{decision.reason}; {len(runs)} runs, each after a run of --good {self.good}"
        if kept and last is not None:
            reason += f" ({min(len(kept), len(runs))} of them kept from an interrupted run)"
        return self._costed(subject, candidate.version, last is None, spent or reused_s,
                            Observation(Found(Status.RAN, metric_verdict(decision.call), reason,
                                              samples=[x for run in runs for x in run])))

    def _costed(self, subject: Subject, key: str, reused: bool, seconds: float, observation: Observation) -> Look:
        """The observation with what it cost and what it ran with; a candidate measured now counts as run now."""
        by, ran_at = self.samples.kept_by(key) if (reused and self.samples) else (self.name, _now())
        python, jaxlib = subject.resolved(key)
        return Look(observation.with_came_from(source=Source.CACHE if reused else Source.RUN, by=by, ran_at=ran_at)
                    .with_cost(seconds=round(seconds, 1), timeout_s=subject.timeout)
                    .with_installed(environment=None if reused else subject.environment_state(key),
                                    python=python, jaxlib=jaxlib, pins=list(self.pins)), not reused)

    @property
    def base_or_fail(self) -> metrics.Baseline:
        assert self.base is not None, "set_baseline first"
        return self.base

    def measure(self, subject: Subject, candidate: Candidate) -> Observation:
        """One run of the check or script; its samples of the metric, or why there are none."""
        try:
            prepared = subject.prepare(candidate.version)
        except ArchiveUnreachable as unknown:
            return install_unknown(unknown, candidate)
        if prepared.environment is None:
            return Observation(Found(Status.NOT_INSTALLABLE, None, f"not installable here: {prepared.problem}"))
        record = subject.run(candidate.version, prepared)
        resolution = prepared.resolution
        python, jaxlib = (resolution.python, resolution.versions.get("jaxlib")) if resolution else (None, None)
        if not record.ran:
            return Observation(Found(Status(record.status_text), None, record.reason), installed=Installed(python=python, jaxlib=jaxlib))
        if record.metrics.get(self.metric) is None:
            known = ", ".join(sorted(record.metrics)) or "none"
            raise UsageError(f"jax {candidate.version}: the {'script' if self.script else 'check'} "
                             f"reported no metric {self.metric!r} (it reported: {known})",
                             "name one of its metrics with --metric, or have it write the metric to KIT_RESULT")
        metric = as_object(record.metrics[self.metric])
        self.unit = str(metric.get("unit") or "")
        self.better = str(metric.get("better") or "lower")
        # A null sample is a NaN or an infinity the run measured (records are strict JSON): not a time.
        samples = [float(x) for x in as_list(metric.get("samples")) if isinstance(x, (int, float))]
        return Observation(Found(Status.RAN, None, "measured", samples=samples),
                           installed=Installed(python=python, jaxlib=jaxlib,
                                               environment=subject.environment_state(candidate.version)))

    def start(self, subject: Subject, bounds: Bounds) -> dict[str, Look]:
        """Measure the bounds in turns (good, bad, good, bad, ...); a step that does not hold → UsageError.

        Rounds kept by an interrupted run of this bisect count first; only the rest are measured.
        """
        good, bad = bounds.good, bounds.bad
        self.good, self.bounds_subject = good, subject
        looks: dict[str, list[list[float]]] = {good: [], bad: []}
        spent = {good: 0.0, bad: 0.0}
        kept = self._kept_rounds(good, bad, looks, spent)
        while len(looks[good]) < BOUND_ROUNDS:
            (good_run, good_s), (bad_run, bad_s) = self._bound_samples(good), self._bound_samples(bad)
            looks[good].append(good_run)
            looks[bad].append(bad_run)
            spent[good] += good_s
            spent[bad] += bad_s
            if self.samples is not None:
                self.samples.add_round(good_run, bad_run, good_s, bad_s, self.unit, self.better)
        try:
            self.base = metrics.baseline_from_rounds(looks[good], looks[bad], self.factor,
                                                     unit=f" {self.unit}")
        except metrics.NoStep as exc:
            raise UsageError(f"{self.metric}: {exc} between --good {good} and --bad {bad}",
                             "nothing to bisect: choose bounds across the slowdown, or a smaller --factor") from None
        return self._bound_observations(subject, good, bad, looks, spent, kept)

    def _kept_rounds(self, good: str, bad: str, looks: dict[str, list[list[float]]],
                     spent: dict[str, float]) -> int:
        if self.samples is None:
            return 0
        if self.samples.note:
            self.log(self.samples.note)
        rounds = self.samples.rounds()[:BOUND_ROUNDS]
        for good_run, bad_run, good_s, bad_s in rounds:
            looks[good].append(good_run)
            looks[bad].append(bad_run)
            spent[good] += good_s
            spent[bad] += bad_s
        if rounds:
            self.unit, self.better = self.samples.unit, self.samples.better
        return len(rounds)

    def _bound_observations(self, subject: Subject, good: str, bad: str, looks: dict[str, list[list[float]]],
                            spent: dict[str, float], kept: int) -> dict[str, Look]:
        assert self.base is not None
        seen: dict[str, Look] = {}
        pooled = {v: [x for run in runs for x in run] for v, runs in looks.items()}
        for version, wanted in ((good, ProbeOutcome.GOOD), (bad, ProbeOutcome.BAD)):
            reason = (f"bound: median {metrics.median(pooled[version]):.4g} {self.unit}, {BOUND_ROUNDS} runs, "
                      f"{len(pooled[version])} samples; step {self.base.step:.2f}x, worse = {self.base.worse}")
            if 0 < kept < BOUND_ROUNDS:
                reason += f" ({kept} of the runs kept from an interrupted run)"
            verdict = Verdict.UNAFFECTED if wanted is ProbeOutcome.GOOD else Verdict.AFFECTED
            seen[version] = self._costed(subject, version, kept == BOUND_ROUNDS, spent[version],
                                         Observation(Found(Status.RAN, verdict, reason, samples=pooled[version])))
        self.log(f"{self.metric}: --good {good} median {metrics.median(pooled[good]):.4g} {self.unit}, "
                 f"--bad {bad} median {metrics.median(pooled[bad]):.4g} {self.unit}: a {self.base.step:.2f}x step "
                 f"({self.base.worse} is worse), in each of {BOUND_ROUNDS} rounds")
        if self.base.worse == self.better:
            self.log(f"note: the metric says {self.better} is better, so --bad {bad} measures better than "
                     f"--good {good}: this finds where it improved (swap --good and --bad for a slowdown hunt)")
        return seen

    def _bound_samples(self, version: str) -> tuple[list[float], float]:
        """One run of a bound: its samples and the seconds it took (its environment's build included)."""
        assert self.bounds_subject is not None, "start first"
        started = time.monotonic()
        observation = self.measure(self.bounds_subject, self.bounds_subject.candidates[version])
        if observation.found.status != Status.RAN:
            raise UsageError(f"bound {version} could not be measured: {observation.found.reason}",
                             "choose bounds that install and run here")
        return list(observation.found.samples), time.monotonic() - started


def _now() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def metric_summary(prober: MetricJudge, observations: Mapping[str, Observation]) -> MetricSummary:
    """The baseline and every measured release's median, in version order, for the report."""
    assert prober.base is not None
    series = sorted(((v, o.found.samples) for v, o in observations.items() if o.found.samples),
                    key=lambda item: Version(item[0]))
    return MetricSummary(
        metric=prober.metric, unit=prober.unit, factor=prober.factor,
        worse=prober.base.worse, step=round(prober.base.step, 3),
        medians={v: metrics.median(s) for v, s in series},
        samples={v: len(s) for v, s in series},
        steps=[MetricStep(a, b, round(r, 3), p) for a, b, r, p in metrics.steps(series, prober.factor, prober.base.alpha)])
