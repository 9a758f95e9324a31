"""Records of a check removed from matrix.toml no longer decide the Answer: they are listed, not counted.

A check once in matrix.toml leaves its records in reports/results; removed,
its affected cells went on holding releases back in `nox -s report`'s Answer
("no measured release passes every check (scaling, mine)") although nothing
the matrix asks found them. Now `nox -s report` passes matrix.toml's check
names, and records of any other check are ad-hoc runs, with why.
docs/faults.md, "Values and records".
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from kit import __version__, cli, records


def _record(check: str, jax: str, verdict: str) -> dict[str, Any]:
    return {"schema": records.SCHEMA, "kit_version": __version__, "check": check,
            "requested": {"jax": jax, "backend": "cpu", "preset": None}, "status": "ran", "verdict": verdict,
            "reason": "measured", "environment": {"backend": "cpu", "device_count": 4},
            "install": {"python": "3.11", "requirements": [f"jax[cpu]=={jax}", "scipy"]},
            "parameters": {}, "evidence": {"summary": {}},
            "host": {"name": "here", "machine_id": records.machine_id()}, "created": "2026-01-01T00:00:00Z"}


def test_a_removed_checks_records_are_listed_and_leave_the_answer_to_the_checks_there(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    results = tmp_path / "results"
    for record in (_record("scaling", "0.6.0", "unaffected"), _record("mine", "0.6.0", "affected")):
        records.write_record(record, results)
    (tmp_path / "matrix.toml").write_text('[kit]\nresults_dir = "results"\n[[release]]\nversion = "0.6.0"\n'
                                          '[checks.scaling]\n', encoding="utf-8")  # [checks.mine] was removed
    code = cli.main(["report", "--results", str(results), "--out", str(tmp_path / "out"), "--no-plots"],
                    matrix_path=str(tmp_path / "matrix.toml"))
    assert code == 0
    report = json.loads((tmp_path / "out" / "matrix.json").read_text())
    [answer] = report["backends"]
    assert (answer["checks"], answer["lowest_passing"]) == (["scaling"], "0.6.0")  # was: no release passes
    [listed] = report["ad_hoc"]
    assert (listed["check"], listed["differs"]) == ("mine", "its check, mine, is not in matrix.toml")
    assert "- **cpu**: lowest release passing every check (scaling): **0.6.0**" in capsys.readouterr().out
