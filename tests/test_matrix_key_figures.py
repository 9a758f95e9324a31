"""kit.matrix.key_figures: a record's summary in the few words a matrix cell shows."""

from __future__ import annotations

import json
from pathlib import Path

from kit.matrix.key_figures import key_figure, speedups
from kit.matrix.rows import finding as _finding
from kit.records import LoadedRecord

FIXTURES = Path(__file__).parent / "fixtures" / "records"


def test_the_scaling_cell_says_which_collective_feeds_the_lu() -> None:
    # Old releases replicate the batch with an all-reduce: no all-gather, still affected.
    figure = key_figure("scaling", {"all_gathers": 0, "lu_fed_by": "all-reduce", "lu_batch_per_device": 4096,
                                    "global_batch": 4096, "devices": 4})
    assert figure == "0 all-gathers; LU input via all-reduce; LU batch 4096 per device of 4096 on 4 devices"
    fixed = key_figure("scaling", {"all_gathers": 0, "lu_fed_by": "", "lu_batch_per_device": 1024,
                                   "global_batch": 4096, "devices": 4})
    assert "no collective before the LU" in fixed


def test_records_without_lu_fed_by_get_it_from_their_structure() -> None:
    record = json.loads((FIXTURES / "cpu-laptop-sweep" / "scaling-0.6.0-unaffected.json").read_text())
    record["evidence"]["summary"].pop("lu_fed_by", None)
    record["evidence"]["verdict_from"] = {"mode": "jit", "pass": "forward", "devices": 4}
    record["evidence"]["structure"] = [
        {"loss": "control", "mode": "jit", "pass": "forward", "devices": 4, "lu_fed_by": []},
        {"loss": "slogdet", "mode": "jit", "pass": "forward", "devices": 4, "lu_fed_by": ["all-gather"]},
    ]
    assert "LU input via all-gather" in _finding(LoadedRecord(Path("x.json"), record)).figure


def _script_record(evidence: dict, packages: dict | None = None, verdict: str = "affected") -> dict:
    environment = {"jax": "0.4.36", "packages": packages} if packages is not None else {"jax": "0.4.36"}
    return {"check": "kwarg", "status": "ran", "verdict": verdict, "reason": "...", "evidence": evidence,
            "environment": environment, "requested": {"jax": "0.4.36", "backend": "cpu"}}


def test_a_script_cell_shows_the_exception_and_the_extra_packages_it_ran_with() -> None:
    evidence = {"summary": {}, "exception": {"type": "TypeError",
                                             "message": "result_paths() got multiple values for argument 'f'\nmore"}}
    finding = _finding(LoadedRecord(Path("kwarg-0.4.36.json"), _script_record(evidence, {"flax": "0.10.2"})))
    assert finding.figure == "TypeError: result_paths() got multiple values for argument 'f'; flax 0.10.2"


def test_a_script_cell_says_which_package_it_could_not_import() -> None:
    evidence = {"summary": {}, "import_error": {"module": "flax.linen", "package": "flax", "installed": None},
                "exception": {"type": "ModuleNotFoundError", "message": "No module named 'flax'"}}
    finding = _finding(LoadedRecord(Path("x.json"), _script_record(evidence, verdict="inconclusive")))
    assert finding.figure == "could not import flax"


def test_scaling_is_shown_as_speedup_over_one_device_with_the_controls_beside_it() -> None:
    # jax 0.12.0.1 on 4 forced CPU devices: slogdet twice as fast, the control (a sum) slower. Their ratio
    # (3.5, once shown as "efficiency") said neither.
    figure = key_figure("scaling", {"slogdet_speedup_2": 2.23, "slogdet_speedup_4": 2.11, "control_speedup_2": 1.32,
                                    "control_speedup_4": 0.61, "efficiency_2": 1.68, "efficiency_4": 3.49})
    assert figure == "speedup over 1 device: slogdet 2.23x @2, 2.11x @4; control 1.32x @2, 0.61x @4"
    assert key_figure("scaling", {"slogdet_speedup_4": 0.24, "control_speedup_4": None}) == \
        "speedup over 1 device: slogdet 0.24x @4"


def test_a_record_that_summarised_only_the_ratio_shows_it_by_its_name() -> None:
    assert key_figure("scaling", {"efficiency_2": 0.14, "efficiency_4": 0.06}) == \
        "slogdet speedup ÷ control speedup 0.14 @2, 0.06 @4"


def test_records_from_before_the_speedup_keys_get_them_from_their_scaling_rows() -> None:
    rows = [{"mode": "jit", "pass": "forward", "devices": devices, "slogdet_speedup": slogdet,
             "control_speedup": control, "efficiency": slogdet / control}
            for devices, slogdet, control in ((1, 1.0, 1.0), (2, 0.49, 3.51), (4, 0.24, 3.72))]
    rows.append({"mode": "shard_map", "pass": "forward", "devices": 4, "slogdet_speedup": 1.85,
                 "control_speedup": 3.6, "efficiency": 0.51})
    record = {"check": "scaling", "status": "ran", "verdict": "affected", "requested": {"jax": "0.4.13"},
              "evidence": {"summary": {"efficiency_2": 0.14, "efficiency_4": 0.06}, "scaling": rows}}
    assert speedups(record["evidence"]) == {"slogdet_speedup_2": 0.49, "slogdet_speedup_4": 0.24,
                                            "control_speedup_2": 3.51, "control_speedup_4": 3.72}
    figure = _finding(LoadedRecord(Path("x.json"), record)).figure
    assert figure.endswith("speedup over 1 device: slogdet 0.49x @2, 0.24x @4; control 3.51x @2, 3.72x @4")
