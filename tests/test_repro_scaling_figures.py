"""repro.scaling_figures: what a scaling run's measured cases become (figures, metrics, the summary)."""

from __future__ import annotations

import statistics

import pytest

from repro import scaling_figures as figures
from repro.hlo import HloEvidence, LinalgCall
from repro.scaling_figures import Case

GATHERED = HloEvidence({"all-gather": 1, "all-reduce": 1},
                       [LinalgCall("lapack_sgetrf_ffi", "lu", (4096, 32, 32), 4096, "operand", ("all-gather",)),
                        LinalgCall("lapack_sgeqrf_ffi", "qr", (8, 8), 1, "operand")])
SPLIT = HloEvidence({"all-reduce": 1}, [LinalgCall("lapack_sgetrf_ffi", "lu", (1024, 32, 32), 1024, "result")])


def case(loss: str, devices: int, times: list[float], mode: str = "jit", pass_: str = "forward",
         evidence: HloEvidence = SPLIT) -> Case:
    return Case(mode, pass_, loss, devices, evidence, None, times)


# jax 0.12.0.1 on 4 forced CPU devices (reports/matrix.md): slogdet about twice as fast on 2 and 4 devices,
# the control (a sum) slower on 4 than on 1.
CASES = [case("control", 1, [2.5e-3]), case("slogdet", 1, [31.3e-3]),
         case("control", 2, [1.9e-3]), case("slogdet", 2, [14.0e-3]),
         case("control", 4, [4.1e-3]), case("slogdet", 4, [14.8e-3])]


def test_speedups_are_over_one_device_for_each_loss_and_their_ratio_is_kept_as_efficiency() -> None:
    rows = figures.scaling_rows(CASES)
    assert [row["devices"] for row in rows] == [1, 2, 4]
    four = figures.find(rows, "jit", "forward", 4)
    assert four["slogdet_speedup"] == pytest.approx(31.3 / 14.8)
    assert four["control_speedup"] == pytest.approx(2.5 / 4.1)
    assert four["efficiency"] == pytest.approx((31.3 / 14.8) / (2.5 / 4.1))  # 3.47: what no reader could place


def test_the_summary_gives_speedups_by_name_not_their_ratio() -> None:
    summary = figures.speedup_summary(figures.scaling_rows(CASES))
    assert summary == {"slogdet_speedup_2": pytest.approx(31.3 / 14.0), "control_speedup_2": pytest.approx(2.5 / 1.9),
                       "slogdet_speedup_4": pytest.approx(31.3 / 14.8), "control_speedup_4": pytest.approx(2.5 / 4.1)}
    assert not any("efficiency" in key for key in summary)


def test_a_device_count_not_measured_is_null_in_the_summary_and_rows_without_one_device_have_no_speedup() -> None:
    only_two = [c for c in CASES if c.devices in (1, 2)]
    summary = figures.speedup_summary(figures.scaling_rows(only_two))
    assert summary["slogdet_speedup_4"] is None
    assert summary["control_speedup_4"] is None
    rows = figures.scaling_rows([c for c in CASES if c.devices != 1])
    assert all(row["slogdet_speedup"] is None and row["efficiency"] is None for row in rows)


def test_timing_records_use_inclusive_quartiles_as_the_kit_does() -> None:
    times = [5.0, 1.0, 3.0, 2.0, 4.0]
    q1, _, q3 = statistics.quantiles(sorted(times), n=4, method="inclusive")
    assert figures.timing_record(times) == {"median_s": 3.0, "q1_s": q1, "q3_s": q3, "min_s": 1.0, "max_s": 5.0,
                                            "runs": 5}
    assert figures.timing_record([0.5])["q1_s"] == figures.timing_record([0.5])["q3_s"] == 0.5


def test_metrics_are_the_jit_forward_timings_in_ms() -> None:
    cases = [case("slogdet", 4, [0.01, 0.02]), case("slogdet", 4, [1.0], pass_="grad"),
             case("slogdet", 4, [1.0], mode="shard_map"), case("control", 2, [])]
    assert figures.metrics(cases) == {"slogdet_4dev_ms": {"unit": "ms", "samples": [10.0, 20.0], "better": "lower"}}


def test_the_verdict_rests_on_jit_forward_at_the_largest_count_else_jit_grad() -> None:
    forward, grad = case("slogdet", 4, [1.0]), case("slogdet", 4, [1.0], pass_="grad")
    shard_map = case("slogdet", 4, [1.0], mode="shard_map")
    assert figures.primary([shard_map, grad, forward, case("slogdet", 2, [1.0])], 4) is forward
    assert figures.primary([shard_map, grad], 4) is grad
    assert figures.primary([shard_map], 4) is shard_map
    assert figures.primary([case("control", 4, [1.0])], 4) is None


def test_structure_names_what_feeds_the_lu_and_every_linalg_call() -> None:
    assert figures.fed_by(GATHERED) == ["all-gather"]
    record = figures.structure_record(GATHERED)
    assert record["collectives"] == {"all-gather": 1, "all-reduce": 1}
    assert record["lu_batch"] == 4096
    assert record["linalg_calls"][1] == {"target": "lapack_sgeqrf_ffi", "kind": "qr", "operand_shape": [8, 8],
                                         "batch": 1, "shape_source": "operand", "fed_by": []}


def test_the_human_summary_names_the_speedups_and_their_ratio_apart() -> None:
    result = {"environment": {"jax": "0.12.0.1", "backend": "cpu", "device_count": 4}, "verdict": "unaffected",
              "reason": "each device factorises its share",
              "evidence": {"positive_control": {"devices": 4, "ok": True}, "notes": ["forced host devices"]}}
    text = figures.human_summary(result, CASES, figures.scaling_rows(CASES))
    assert "ctl x, det x: speedup over 1 device = time on 1 ÷ time here" in text
    row = next(line for line in text.splitlines() if line.startswith("  jit") and line.split()[2] == "4")
    assert row.split()[-3:] == ["0.61", "2.11", "3.47"]
    assert "positive control (rows sharded, 4 dev): collective seen" in text
    assert text.endswith("note: forced host devices")


def test_an_untimed_run_has_its_rows_and_structure_and_says_it_timed_nothing() -> None:
    """``--repeats 0`` (a bisect probe on CPU): the HLO table stands, every timing figure is null, none is made up."""
    untimed = [case(c.loss, c.devices, []) for c in CASES]
    rows = figures.scaling_rows(untimed)
    assert [row["devices"] for row in rows] == [1, 2, 4]
    assert all(row["slogdet_speedup"] is row["control_speedup"] is row["efficiency"] is None for row in rows)
    assert set(figures.speedup_summary(rows).values()) == {None}
    assert figures.metrics(untimed) == {}
    assert figures.timing_record([]) == {"median_s": None, "q1_s": None, "q3_s": None, "min_s": None, "max_s": None,
                                         "runs": 0}
    result = {"environment": {"jax": "0.6.0", "backend": "cpu", "device_count": 4}, "verdict": "unaffected",
              "reason": "r", "evidence": {"positive_control": {"devices": 4, "ok": True}, "notes": []}}
    text = figures.human_summary(result, untimed, rows)
    assert "not timed" in text
    assert "1024" in text
