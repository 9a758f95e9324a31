"""kit.matrix.key_figures: a record's summary in the few words a matrix cell shows."""

from __future__ import annotations

import json
from pathlib import Path

from kit.matrix.key_figures import key_figure
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
