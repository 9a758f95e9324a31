"""A metric bisect stopped by Ctrl-C (docs/faults.md, "Bisect"): the rerun reuses what was measured, or says
plainly why not. Measurements come from a table (as in tests/test_bisect_metric.py); the samples file, the
decisions and the search are real."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any, Callable

import pytest

from kit.bisect.candidates import Candidate
from kit.bisect.bounds import Bounds
from kit.bisect.probe.judges import release_prober
from kit.bisect.run_spec import run_spec
from kit.bisect.probe.metric import MetricJudge
from kit.bisect.probe.metric_samples import MAX_AGE_H, MetricSamples
from kit.bisect.options import parse_options
from kit.bisect.observation import Observation
from kit.bisect.probe.cache import ProbeCache
from kit.bisect.probe.probes import Subject
from kit.bisect.search import ProbeOutcome, bisect
from kit.config import load_matrix
from tests.bisect_machine import METRIC_VERSIONS as VERSIONS, step_at as _step_at
from tests.observations import observed

ROOT = Path(__file__).resolve().parents[2]
GOOD, BAD = "0.6.0", "0.4.35"


class CountingJudge(MetricJudge):
    """Measures from a table, counting runs; raises KeyboardInterrupt at the run named by ``stop_at``."""

    table: dict[str, Callable[[int], list[float]]]
    runs: dict[str, int]
    stop_at: tuple[str, int] | None = None

    def measure(self, subject: Subject, candidate: Candidate) -> Observation:
        version = candidate.version
        self.runs[version] = self.runs.get(version, 0) + 1
        if (version, self.runs[version]) == self.stop_at:
            raise KeyboardInterrupt
        time.sleep(0.05)  # a cost to report
        return observed("ran", None, "measured", samples=self.table[version](self.runs[version]))


def _prober(tmp_path: Path, machine: str = "this-machine", factor: str = "1.5",
            clock: Callable[[], float] = time.time, fresh: bool = False) -> Any:
    """A release prober judged by a :class:`CountingJudge`; its ``runs`` and ``lines`` are the judge's."""
    matrix = load_matrix(ROOT / "matrix.toml")
    argv = ["--check", "scaling", "--metric", "t_ms", "--good", GOOD, "--bad", BAD, "--factor", factor]
    options = parse_options(matrix, argv + (["--fresh"] if fresh else []))
    candidates = [Candidate(v, (), None, "3.12", v) for v in VERSIONS]
    lines: list[str] = []
    identity = {"subject": "table", "metric": "t_ms", "good": GOOD, "bad": BAD, "backend": "cpu"}
    samples = MetricSamples(tmp_path / "metric", identity, machine, {GOOD: ("3.12", GOOD), BAD: ("3.12", BAD)},
                            "test-bisect", read=not fresh, log=lines.append, clock=clock)
    judge = CountingJudge(options.specs.search, False, "test-bisect", lines.append, samples)
    judge.table, judge.runs = _step_at("0.5.3"), {}
    prober: Any = release_prober(matrix, options.specs, run_spec(matrix, options.specs.runs), candidates, ProbeCache(tmp_path / "probes"),
                                 "test-bisect", None, lines.append, judge)  # type: ignore[arg-type]
    prober.runs, prober.lines = judge.runs, lines
    return prober


def _search(prober: Any) -> tuple[str, list[str]]:
    cache: dict[str, ProbeOutcome] = {}
    prober.start(Bounds.of_releases(GOOD, BAD), cache)
    result = bisect(VERSIONS, prober, old_outcome=ProbeOutcome.BAD, cache=cache)
    return result.first_different, result.ambiguous


def test_a_rerun_after_ctrl_c_measures_only_what_was_not_finished(tmp_path: Path) -> None:
    whole = _prober(tmp_path / "whole")
    assert _search(whole) == ("0.5.3", [])
    probed = [v for v in whole.runs if v not in (GOOD, BAD)]
    interrupted = _prober(tmp_path)
    interrupted.judge.stop_at = (probed[1], 2)  # the second run of the second probe: its first pair is complete
    with pytest.raises(KeyboardInterrupt):
        _search(interrupted)
    resumed = _prober(tmp_path)
    assert _search(resumed) == ("0.5.3", [])
    assert resumed.lines[0].startswith("reusing the metric samples measured from ")
    assert "3 rounds of the bounds and 3 probe runs" in resumed.lines[0]
    assert BAD not in resumed.runs
    assert probed[0] not in resumed.runs  # kept whole: nothing measured again
    assert resumed.runs[probed[1]] == 1  # only its missing run
    assert resumed.observations[BAD].came_from.source == "cache"
    assert resumed.observations[probed[0]].came_from.source == "cache"
    assert "1 of them kept from an interrupted run" in resumed.observations[probed[1]].found.reason
    assert sum(resumed.runs.values()) < sum(whole.runs.values()) - 6


def test_a_completed_metric_bisect_reruns_nothing_even_with_another_factor(tmp_path: Path) -> None:
    assert _search(_prober(tmp_path)) == ("0.5.3", [])
    again = _prober(tmp_path, factor="1.8")  # the decisions are made again from the kept samples
    assert _search(again) == ("0.5.3", [])
    assert again.runs == {}
    assert again.ran_now == []


@pytest.mark.parametrize(("change", "why"), [
    ({"machine": "another-machine"}, "they were measured on another machine"),
    ({"clock": lambda: time.time() + (MAX_AGE_H + 6) * 3600}, "they are 30 h old; samples older than 24 h"),
])
def test_samples_of_another_machine_or_too_old_are_not_reused_and_it_says_why(
        tmp_path: Path, change: dict, why: str) -> None:
    _search(_prober(tmp_path))
    again = _prober(tmp_path, **change)
    _search(again)
    assert again.lines[0].startswith("not reusing the metric samples measured from ")
    assert why in again.lines[0]
    assert again.lines[0].endswith(": measuring afresh")
    assert again.runs[BAD] == 3


def test_fresh_measures_everything_and_says_so(tmp_path: Path) -> None:
    _search(_prober(tmp_path))
    again = _prober(tmp_path, fresh=True)
    _search(again)
    assert again.lines[0] == "--fresh: the bounds and probes are measured afresh"
    assert again.runs[BAD] == 3


def test_each_measured_probe_reports_what_it_ran_with_and_cost(tmp_path: Path) -> None:
    prober = _prober(tmp_path)
    _search(prober)
    for version in prober.ran_now:
        seen = prober.observations[version]
        assert seen.came_from.source == "run"
        assert (seen.installed.python, seen.installed.jaxlib) == ("3.12", version)
        assert seen.cost.seconds > 0
        assert seen.came_from.by == "test-bisect"
        assert seen.came_from.ran_at


def test_a_torn_samples_file_is_measured_again(tmp_path: Path) -> None:
    _search(_prober(tmp_path))
    [kept] = (tmp_path / "metric").glob("*.json")
    kept.write_text(kept.read_text()[:100])
    again = _prober(tmp_path)
    _search(again)
    assert again.runs[BAD] == 3
    assert json.loads(kept.read_text())["rounds"]
