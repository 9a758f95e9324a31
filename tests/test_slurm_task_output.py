"""kit/slurm/task_output.py: why a SLURM array task left no record, read from the end of its output file.

The two basic cases (scancel, a time limit; an ERROR line) are in tests/faults/test_slurm_faults.py.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from kit.slurm import task_output
from kit.slurm.task_output import task_end
from kit.text_bounds import REASON_CHARS


def _out(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "12_3.out"
    path.write_text(text)
    return path


def test_a_cancelled_step_reads_as_cancelled_too(tmp_path: Path) -> None:
    # slurmstepd says STEP, not JOB, when srun's step is what was cancelled.
    out = _out(tmp_path, "slurmstepd: error: *** STEP 12.0 ON node01 CANCELLED AT 2026-11-30T09:10:00 DUE TO "
                         "NODE FAILURE ***\n")
    assert task_end(out).sentence == f"cancelled by SLURM at 2026-11-30T09:10:00 due to node failure; see {out}"


def test_the_last_cancel_line_is_the_one_that_counts(tmp_path: Path) -> None:
    # A requeued task may carry an earlier cancel (preemption) before the one that ended it.
    out = _out(tmp_path, "*** JOB 12 ON n1 CANCELLED AT 2026-11-30T09:00:00 DUE TO PREEMPTION ***\n"
                         "started again\n"
                         "*** JOB 12 ON n2 CANCELLED AT 2026-11-30T10:00:00 DUE TO TIME LIMIT ***\n")
    assert "at 2026-11-30T10:00:00 due to time limit;" in task_end(out).sentence


def test_a_cancel_wins_over_an_error_line(tmp_path: Path) -> None:
    # The task may print an ERROR (a KeyboardInterrupt's) while SLURM ends it: the cancel is why it ended.
    out = _out(tmp_path, "ERROR: interrupted\n*** JOB 12 ON n1 CANCELLED AT 2026-11-30T09:00:00 ***\n")
    assert task_end(out).status == "cancelled"


def test_only_lines_that_start_with_error_are_quoted_and_the_last_one(tmp_path: Path) -> None:
    out = _out(tmp_path, "ERROR: first\nsome ERROR: in the middle\nERROR: second\nTIP: do this\n")
    end = task_end(out)
    assert (end.status, end.sentence) == ("error", f"finished without a record (ERROR: second); see {out}")


def test_an_output_without_either_is_an_error_without_a_quote(tmp_path: Path) -> None:
    out = _out(tmp_path, "array task 3: scaling 0.6.0\n")
    assert task_end(out) == task_output.TaskEnd("error", f"finished without a record; see {out}")


def test_a_long_error_line_is_cut_to_a_reason(tmp_path: Path) -> None:
    out = _out(tmp_path, "ERROR: " + "x" * 5000 + "\n")
    sentence = task_end(out).sentence
    assert "… [cut " in sentence
    assert len(sentence) < REASON_CHARS + 100 + len(str(out))


def test_only_the_end_of_a_huge_output_is_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # A cancel line before the tail that is read is not seen: the tail, not the whole file, is searched.
    monkeypatch.setattr(task_output, "TAIL_BYTES", 100)
    out = _out(tmp_path, "*** JOB 12 ON n1 CANCELLED AT 2026-11-30T09:00:00 ***\n" + "x" * 200 + "\nERROR: late\n")
    assert task_end(out).sentence == f"finished without a record (ERROR: late); see {out}"


def test_bytes_that_are_not_utf8_do_not_stop_the_reading(tmp_path: Path) -> None:
    out = tmp_path / "12_3.out"
    out.write_bytes(b"\xff\xfe garbage\n*** JOB 12 ON n1 CANCELLED AT 2026-11-30T09:00:00 DUE TO TIME LIMIT ***\n")
    assert task_end(out).status == "cancelled"


def test_an_output_that_is_a_folder_reads_as_nothing_said(tmp_path: Path) -> None:
    folder = tmp_path / "12_3.out"
    folder.mkdir()
    assert task_end(folder).sentence == f"finished without a record; see {folder}"
