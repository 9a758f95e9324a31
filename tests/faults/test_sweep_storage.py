"""A sweep that cannot keep its records (docs/faults.md, "Sweep"): exit 1 and one sentence, not "successful".

The cells really run (a script check on the fake machine of tests/fake_releases.py:
planned, locked, prepared and run by the kit itself) and really fail to write
into the results folder.
"""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path
from typing import Callable

import pytest

from kit.config import Matrix
from kit.matrix import sweep
from kit import records
from kit.run import runner
from tests.fake_releases import FakeReleases


@pytest.fixture
def matrix(fake_releases: Callable[..., FakeReleases], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Matrix:
    script = tmp_path / "quick.py"
    script.write_text("print('measured')\n")
    monkeypatch.setenv("TMPDIR", str(tmp_path / "tmp"))  # where an unsaved record is kept aside
    (tmp_path / "tmp").mkdir()
    monkeypatch.setattr("tempfile.tempdir", None)  # read TMPDIR again
    machine = fake_releases(["0.6.0", "0.6.2"],
                            checks={"quick": {"script": str(script)}, "other": {"script": str(script)}})
    return machine.matrix


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
    assert "could not write the record into" in error
    assert "it was kept at" in error
    kept = list((tmp_path / "tmp").rglob("*.json"))
    assert len(kept) == 1
    assert records.load_records(kept[0].parent).records[0]["status"] == "ran"
    table = capsys.readouterr().out
    assert "unsaved" in table


def test_a_writable_results_folder_still_succeeds(matrix: Matrix) -> None:
    assert sweep.main(matrix, [], lambda _m: None) == sweep.EXIT_OK
    assert len(records.load_records(matrix.results_dir).records) == 4
    assert os.access(matrix.results_dir, os.W_OK)
