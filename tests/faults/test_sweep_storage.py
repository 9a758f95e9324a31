"""A sweep that cannot keep its records (docs/faults.md, "Sweep"): exit 1 and one sentence, not "successful".

The cells really run (a script check, this interpreter standing in for the
release's python) and really fail to write into the results folder; only
planning is faked, as in tests/test_matrix_sweep.py.
"""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path

import pytest

from kit.config import Matrix, parse_matrix
from kit.install import plan as install, release
from kit.install.index import PackageIndex
from kit.matrix import sweep
from kit import records
from kit.run import runner
from tests.faults.script_checks import prepared_here
from tests.test_matrix_sweep import fake_plan, fake_resolve


@pytest.fixture
def matrix(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Matrix:
    script = tmp_path / "quick.py"
    script.write_text("print('measured')\n")
    raw = {"kit": {"results_dir": str(tmp_path / "results"), "envs_dir": str(tmp_path / "envs")},
           "release": [{"version": "0.6.0"}, {"version": "0.6.2"}],
           "checks": {"quick": {"script": str(script)}, "other": {"script": str(script)}}}
    monkeypatch.setenv("KIT_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("TMPDIR", str(tmp_path / "tmp"))  # where an unsaved record is kept aside
    (tmp_path / "tmp").mkdir()
    monkeypatch.setattr("tempfile.tempdir", None)  # read TMPDIR again
    monkeypatch.setattr(PackageIndex, "check_reachable", lambda self: None)
    monkeypatch.setattr(PackageIndex, "unknown_release", lambda self, version: "")
    monkeypatch.setattr(release, "plan_install", fake_plan)
    monkeypatch.setattr(install, "resolve", fake_resolve)
    monkeypatch.setattr(release, "available_pythons", lambda wanted: list(wanted))
    monkeypatch.setattr(sweep, "prepare", lambda *args, **kwargs: prepared_here(tmp_path))
    return parse_matrix(raw, tmp_path / "matrix.toml")


def test_a_results_folder_that_cannot_be_written_fails_the_sweep(matrix: Matrix, tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    # A file where the results folder should be: as a read-only or full disk, writing fails for real.
    blocked = tmp_path / "blocked"
    blocked.write_text("not a folder")
    matrix = dataclasses.replace(matrix, results_dir=blocked / "results")
    lines: list[str] = []
    ran: list[str] = []
    real_run_check = runner.run_check

    def counting_run_check(*args: object, **kwargs: object) -> object:
        ran.append("cell")
        return real_run_check(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(sweep, "run_check", counting_run_check)
    code = sweep.main(matrix, [], lines.append)
    assert code == sweep.EXIT_FAILED
    assert len(ran) == 1, "every later cell would fail the same way: the sweep stops at the first"
    assert lines[-1].startswith("matrix FAILED after ")
    assert "a record could not be kept, so the sweep stopped with 3 cells not run; TIP: " in lines[-1]
    error = next(line for line in lines if line.startswith("ERROR in "))
    assert "could not write the record into" in error and "it was kept at" in error
    kept = list((tmp_path / "tmp").rglob("*.json"))
    assert len(kept) == 1 and records.load_records(kept[0].parent).records[0]["status"] == "ran"
    table = capsys.readouterr().out
    assert "unsaved" in table


def test_a_writable_results_folder_still_succeeds(matrix: Matrix) -> None:
    assert sweep.main(matrix, [], lambda _m: None) == sweep.EXIT_OK
    assert len(records.load_records(matrix.results_dir).records) == 4
    assert os.access(matrix.results_dir, os.W_OK)
