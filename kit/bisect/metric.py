"""``--metric``: bisect where a measured metric stepped, from repeated samples and a rank test.

Each probe runs the check (a record, as the matrix keeps them) or the script
(its KIT_RESULT) and reads one metric's samples. The bounds, run in turns for
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

from typing import Any

from packaging.version import Version

from .. import metrics
from ..run import runner
from ..errors import UsageError
from .candidates import Candidate
from .outcomes import Observation, classify, describe
from .options import DEFAULT_SCRIPT_TIMEOUT_S
from .probes import Prober
from .search import Outcome

# Runs of each bound, taken in turns, and runs per probe: samples of one run share its moment's load.
BOUND_ROUNDS = 3
PROBE_RUNS = 2
VERDICTS = {metrics.Call.BAD: "affected", metrics.Call.GOOD: "unaffected", metrics.Call.UNDECIDED: "inconclusive"}


class MetricProber(Prober):
    """Measures a metric per release; once the bounds set the baseline, a probe is a step decision."""

    base: metrics.Baseline | None = None
    unit: str = ""
    better: str = "lower"
    good: str = ""
    """What the metric itself declares; the bounds decide the direction, this only words a warning."""

    def __call__(self, version: str) -> Outcome:
        assert self.base is not None, "set_baseline first"
        observation = self.observe(self.candidates[version])
        self.observations[version] = observation
        if version not in self.ran_now:
            self.ran_now.append(version)  # measured afresh: a metric is judged against this run's baseline
        result = classify(observation, self.options.crash)
        self.log(f"probe {self.name_of(version)}: {describe(result, bool(self.options.script))} [{observation.source}] "
                 f"{observation.reason}")
        return result

    def observe(self, candidate: Candidate) -> Observation:
        """Runs of the probe, each right after a run of --good; decided together and pair by pair.

        Within noise after ``PROBE_RUNS`` pairs, one more pair runs and everything is pooled.
        """
        runs: list[list[float]] = []
        goods: list[list[float]] = []
        decision: metrics.Decision | None = None
        for _ in range(PROBE_RUNS + 1):
            goods.append(self._bound_samples(self.good))
            one = self.measure(candidate)
            if one.status != "ran":
                return one
            runs.append(list(one.samples))
            if len(runs) < PROBE_RUNS:
                continue
            decision = metrics.decide_runs(self.base_or_fail, runs, goods)
            if decision.call is not metrics.Call.UNDECIDED:
                break
        assert decision is not None
        samples = [x for run in runs for x in run]
        return Observation("ran", VERDICTS[decision.call], f"{decision.reason}; {len(runs)} runs, each after "
                           f"a run of --good {self.good}", "run", [], False,
                           self._environments.get(candidate.version), samples)

    @property
    def base_or_fail(self) -> metrics.Baseline:
        assert self.base is not None, "set_baseline first"
        return self.base

    def measure(self, candidate: Candidate) -> Observation:
        """One run of the check or script; its samples of the metric, or why there are none."""
        prepared = self._prepare(candidate.version)
        if prepared.environment is None:
            return Observation("not-installable", None, f"not installable here: {prepared.problem}")
        if self.options.script:
            timeout = self.options.timeout or DEFAULT_SCRIPT_TIMEOUT_S
            fields = runner.run_script(prepared.environment, self.options.script, self.options.backend, None, timeout,
                                       self.log)
        else:
            fields, _path = runner.run_check(self.matrix, self._request(candidate.version), self.log, self.index,
                                             prepared=prepared)
        if fields.get("status") != "ran":
            return Observation(str(fields.get("status")), None, str(fields.get("reason") or ""))
        metric = (fields.get("metrics") or {}).get(self.options.metric)
        if metric is None:
            known = ", ".join(sorted(fields.get("metrics") or {})) or "none"
            raise UsageError(f"jax {candidate.version}: the {'script' if self.options.script else 'check'} "
                             f"reported no metric {self.options.metric!r} (it reported: {known})",
                             "name one of its metrics with --metric, or have it write the metric to KIT_RESULT")
        self.unit = str(metric.get("unit") or "")
        self.better = str(metric.get("better") or "lower")
        return Observation("ran", None, "measured", "run", [], False,
                           self._environments.get(candidate.version), [float(x) for x in metric["samples"]])

    def set_baseline(self, good: str, bad: str, cache: dict[str, Outcome]) -> metrics.Baseline:
        """Measure the bounds in turns (good, bad, good, bad, ...); a step that does not hold → UsageError."""
        self.good = good
        looks: dict[str, list[list[float]]] = {good: [], bad: []}
        for _ in range(BOUND_ROUNDS):
            for version in (good, bad):
                looks[version].append(self._bound_samples(version))
        try:
            self.base = metrics.baseline_from_rounds(looks[good], looks[bad], self.options.factor,
                                                     unit=f" {self.unit}")
        except metrics.NoStep as exc:
            raise UsageError(f"{self.options.metric}: {exc} between --good {good} and --bad {bad}",
                             "nothing to bisect: choose bounds across the slowdown, or a smaller --factor") from None
        pooled = {v: [x for run in runs for x in run] for v, runs in looks.items()}
        for version, wanted in ((good, Outcome.GOOD), (bad, Outcome.BAD)):
            reason = (f"bound: median {metrics.median(pooled[version]):.4g} {self.unit}, {BOUND_ROUNDS} runs, "
                      f"{len(pooled[version])} samples; step {self.base.step:.2f}x, worse = {self.base.worse}")
            verdict = "unaffected" if wanted is Outcome.GOOD else "affected"
            self.observations[version] = Observation("ran", verdict, reason, "run", [], False,
                                                     self._environments.get(version), pooled[version])
            self.ran_now.append(version)
            cache[version] = wanted
        self.log(f"{self.options.metric}: --good {good} median {metrics.median(pooled[good]):.4g} {self.unit}, "
                 f"--bad {bad} median {metrics.median(pooled[bad]):.4g} {self.unit}: a {self.base.step:.2f}x step "
                 f"({self.base.worse} is worse), in each of {BOUND_ROUNDS} rounds")
        if self.base.worse == self.better:
            self.log(f"note: the metric says {self.better} is better, so --bad {bad} measures better than "
                     f"--good {good}: this finds where it improved (swap --good and --bad for a slowdown hunt)")
        return self.base

    def _bound_samples(self, version: str) -> list[float]:
        observation = self.measure(self.candidates[version])
        if observation.status != "ran":
            raise UsageError(f"bound {version} could not be measured: {observation.reason}",
                             "choose bounds that install and run here")
        return list(observation.samples)


def metric_summary(prober: MetricProber, observations: dict[str, Observation]) -> dict[str, Any]:
    """The baseline and every measured release's median, in version order, for the report."""
    assert prober.base is not None
    series = sorted(((v, o.samples) for v, o in observations.items() if o.samples),
                    key=lambda item: Version(item[0]))
    return {
        "metric": prober.options.metric, "unit": prober.unit, "factor": prober.options.factor,
        "worse": prober.base.worse, "step": round(prober.base.step, 3),
        "medians": {v: metrics.median(s) for v, s in series},
        "samples": {v: len(s) for v, s in series},
        "steps": [{"before": a, "after": b, "ratio": round(r, 3), "p": p}
                  for a, b, r, p in metrics.steps(series, prober.options.factor, prober.base.alpha)],
    }
