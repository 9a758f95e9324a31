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
