"""--metric probes without installs: measurements come from a table, the decisions and the search are real."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

import pytest

from kit.bisect.candidates import Candidate
from kit.bisect.bounds import Bounds
from kit.bisect.probe.judges import release_prober
from kit.bisect.run_spec import run_spec
from kit.bisect.probe.metric import MetricJudge
from kit.bisect.options import parse_options
from kit.bisect.observation import Observation
from kit.bisect.probe.probes import Subject
from kit.bisect.search import ProbeOutcome, bisect
from kit.bisect.probe.cache import ProbeCache
from kit.config import load_matrix
from kit.errors import UsageError

from tests.bisect_machine import METRIC_VERSIONS as VERSIONS, ROOT, noisy, step_at as _step_at
from tests.observations import observed


class TableJudge(MetricJudge):
    """Measures by calling ``table[version](run_number)``; counts the runs."""

    table: dict[str, Callable[[int], list[float]]]
    runs: dict[str, int]

    def measure(self, subject: Subject, candidate: Candidate) -> Observation:
        self.runs[candidate.version] = self.runs.get(candidate.version, 0) + 1
        return observed("ran", None, "measured", samples=self.table[candidate.version](self.runs[candidate.version]))


def _prober(tmp_path: Path, table: dict[str, Callable[[int], list[float]]], good: str = "0.6.0",
            bad: str = "0.4.35", pins: tuple[str, ...] = ()) -> Any:
    """A release prober judged by a :class:`TableJudge`; its ``runs`` are the judge's."""
    matrix = load_matrix(ROOT / "matrix.toml")
    options = parse_options(matrix, ["--check", "scaling", "--metric", "t_ms", "--good", good, "--bad", bad])
    candidates = [Candidate(v, (), None, "3.12", v) for v in VERSIONS]
    judge = TableJudge(options.specs.search, False, "test", lambda _m: None, pins=pins)
    judge.table, judge.runs = table, {}
    prober: Any = release_prober(matrix, options.specs, run_spec(matrix, options.specs.runs), candidates, ProbeCache(tmp_path / "probes"),
                                 "test", None, lambda _m: None, judge)  # type: ignore[arg-type]
    prober.runs = judge.runs
    return prober


def _search(prober: Any, good: str = "0.6.0", bad: str = "0.4.35"):
    cache: dict[str, ProbeOutcome] = {}
    prober.start(Bounds.of_releases(good, bad), cache)
    return bisect(VERSIONS, prober, old_outcome=ProbeOutcome.BAD, cache=cache)


def test_a_clean_2x_step_is_found_in_log2_probes(tmp_path: Path) -> None:
    prober = _prober(tmp_path, _step_at("0.5.3"))
    result = _search(prober)
    assert (result.last_same, result.first_different, result.ambiguous) == ("0.5.2", "0.5.3", [])
    assert len(prober.runs) <= 2 + 4  # the bounds and ceil(log2 9) releases
    probed = [v for v in prober.runs if v not in ("0.6.0", "0.4.35")]
    assert all(prober.runs[v] == 2 for v in probed)  # two runs a probe, each after a run of --good
    assert prober.runs["0.4.35"] == 3
    assert prober.runs["0.6.0"] == 3 + 2 * len(probed)


def test_a_probe_within_noise_is_measured_again_and_pooled(tmp_path: Path) -> None:
    table = _step_at("0.5.3")
    # 0.5.0 reports one sample a run: two runs cannot pass a rank test, a third with nine more can.
    table["0.5.0"] = lambda run: [20.0] if run < 3 else noisy(20, seed=99)
    prober = _prober(tmp_path, table)
    result = _search(prober)
    assert result.first_different == "0.5.3"
    assert prober.runs["0.5.0"] == 3
    assert prober.observations["0.5.0"].found.verdict == "affected"
    assert len(prober.observations["0.5.0"].found.samples) == 11


def test_one_odd_run_out_of_three_is_outvoted(tmp_path: Path) -> None:
    table = _step_at("0.5.3")
    table["0.5.3"] = lambda run: noisy(20 if run == 2 else 10, seed=run)  # the second run met a burst of load
    prober = _prober(tmp_path, table)
    result = _search(prober)
    assert prober.runs["0.5.3"] == 3  # two runs disagreed, so a third decided
    assert (result.first_different, result.ambiguous) == ("0.5.3", [])


def test_a_probe_that_stays_within_noise_is_skipped_and_named(tmp_path: Path) -> None:
    table = _step_at("0.5.3")
    table["0.5.2"] = lambda run: [5, 8, 11, 14.5, 14.5, 16, 25, 30, 40]  # 1.45x, too spread to tell from bad
    prober = _prober(tmp_path, table)
    result = _search(prober)
    assert prober.runs["0.5.2"] == 3
    assert prober.observations["0.5.2"].found.verdict == "inconclusive"
    assert "within noise" in prober.observations["0.5.2"].found.reason
    assert result.first_different == "0.5.3"
    assert result.ambiguous == ["0.5.2"]


def test_bounds_without_the_factor_between_them_stop_saying_no_step(tmp_path: Path) -> None:
    flat = {v: (lambda run, i=i: noisy(10, seed=i * 10 + run)) for i, v in enumerate(VERSIONS)}
    prober = _prober(tmp_path, flat)
    with pytest.raises(UsageError, match="t_ms: no step: the bounds differ by 1.0"):
        _search(prober)
    assert prober.runs == {"0.6.0": 3, "0.4.35": 3}  # three rounds each before giving up


def test_all_lists_every_step_larger_than_the_factor(tmp_path: Path) -> None:
    from kit.bisect.search import scan_all

    table = _step_at("0.5.3")
    table["0.4.37"] = lambda run: noisy(60, seed=run)  # a second, 3x step up and back down
    prober = _prober(tmp_path, table)
    cache: dict[str, ProbeOutcome] = {}
    prober.start(Bounds.of_releases("0.6.0", "0.4.35"), cache)
    scan_all(VERSIONS, prober, cache)
    steps = [(s.before, s.after) for s in prober.summary().steps]
    assert steps == [("0.4.36", "0.4.37"), ("0.4.37", "0.4.38"), ("0.5.2", "0.5.3")]


def test_every_measured_release_says_the_pins_it_held(tmp_path: Path) -> None:
    # Since the report reads pins off the observations (not the command line), a metric bisect's summary lost
    # "holding numpy==1.26.4": only the verdict judge put them there.
    prober = _prober(tmp_path, _step_at("0.5.3"), pins=("numpy==1.26.4",))
    _search(prober)
    assert prober.observations and all(o.installed.pins == ["numpy==1.26.4"] for o in prober.observations.values())
