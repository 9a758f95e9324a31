"""SLURM faults (docs/faults.md, "SLURM"): a cancelled task says it was cancelled; no controller answering
is one sentence in seconds, before anything is built or submitted."""

from __future__ import annotations

import shutil
import subprocess
import time
from pathlib import Path
import pytest

from kit.config import Matrix, parse_matrix
from kit.errors import UsageError
from kit.matrix import slurm, sweep
from kit.matrix.slurm import ArrayTask
from kit.slurm.task_output import task_end

needs_slurm_tools = pytest.mark.skipif(not (shutil.which("sbatch") and shutil.which("scontrol")),
                                       reason="SLURM's sbatch and scontrol are not installed here")


def test_the_output_of_a_cancelled_task_reads_as_cancelled(tmp_path: Path) -> None:
    # slurmstepd's own words, as the local cluster wrote them for `scancel` and for a time limit.
    out = tmp_path / "7_0.out"
    out.write_text("array task 0: hostile 0.6.0 on vm\nslurmstepd-vm: error: *** JOB 8 ON vm CANCELLED AT "
                   "2026-11-30T09:04:44 ***\n")
    end = task_end(out)
    assert end.status == "cancelled"
    assert end.sentence == (f"cancelled by SLURM at 2026-11-30T09:04:44 by scancel (a user or an administrator); "
                            f"see {out}")
    out.write_text("slurmstepd-vm: error: *** JOB 8 ON vm CANCELLED AT 2026-11-30T10:00:00 DUE TO TIME LIMIT ***\n")
    assert task_end(out).sentence.startswith("cancelled by SLURM at 2026-11-30T10:00:00 due to time limit; ")


def test_a_task_that_ended_on_an_error_quotes_it(tmp_path: Path) -> None:
    out = tmp_path / "7_0.out"
    out.write_text("array task 0\nERROR: could not write the record into reports/results (No space left on device)\n"
                   "TIP: free some space\n")
    end = task_end(out)
    assert end.status == "error"
    assert end.sentence == ("finished without a record (ERROR: could not write the record into reports/results "
                            f"(No space left on device)); see {out}")
    assert task_end(tmp_path / "absent.out").sentence == f"finished without a record; see {tmp_path / 'absent.out'}"


@pytest.fixture
def silent_controller(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A slurm.conf whose controller port nothing listens on: SLURM installed, no cluster answering."""
    conf = tmp_path / "slurm.conf"
    conf.write_text("ClusterName=nowhere\nSlurmctldHost=localhost\nSlurmctldPort=1\n"
                    "NodeName=localhost CPUs=1 State=UNKNOWN\nPartitionName=p Nodes=localhost Default=YES\n")
    monkeypatch.setenv("SLURM_CONF", str(conf))
    return conf


@pytest.fixture
def matrix(tmp_path: Path) -> Matrix:
    return parse_matrix({"kit": {"results_dir": str(tmp_path / "results"), "envs_dir": str(tmp_path / "envs")},
                         "release": [{"version": "0.6.0"}], "checks": {"scaling": {}}}, tmp_path / "matrix.toml")


@needs_slurm_tools
def test_no_controller_answering_is_one_sentence_in_seconds(silent_controller: Path, matrix: Matrix) -> None:
    started = time.monotonic()
    with pytest.raises(UsageError) as caught:
        sweep.main(matrix, ["--slurm"], lambda _m: pytest.fail("nothing should be planned or logged"))
    assert time.monotonic() - started < 5  # sbatch alone retries for 9-60 s
    assert str(caught.value) == ("--slurm: the SLURM controller is not answering (scontrol ping: "
                                 f"Slurmctld(primary) at {_controller_name()} is DOWN); nothing was built or submitted")
    assert f"SLURM_CONF (now {silent_controller})" in caught.value.tip
    assert "--partition" not in caught.value.tip


def _controller_name() -> str:
    said = subprocess.run(["scontrol", "ping"], capture_output=True, text=True).stdout
    return said.split(" at ", 1)[1].split(" is ", 1)[0]


@pytest.mark.integration
@pytest.mark.slurm
def test_a_task_cancelled_with_scancel_is_reported_cancelled(local_slurm: dict[str, str],
                                                              tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    for key, value in local_slurm.items():
        monkeypatch.setenv(key, value)
    job_id = subprocess.run(["sbatch", "--parsable", "--array=0-0", f"--output={tmp_path}/%A_%a.out",
                             "--wrap", "echo started; sleep 300"], check=True, capture_output=True,
                            text=True).stdout.strip().split(";")[0]
    _wait_until_running(job_id)
    subprocess.run(["scancel", job_id], check=True)
    lines: list[str] = []
    landed = slurm.wait(job_id, [ArrayTask("hostile", "0.6.0")], tmp_path, tmp_path / "results", time.time(),
                        lines.append, poll_s=0.5)
    [end] = landed.values()
    assert isinstance(end, slurm.TaskEnd)
    assert end.status == "cancelled"
    assert lines[-1].startswith("[1/1] hostile · jax 0.6.0: cancelled by SLURM at ")
    assert "by scancel" in lines[-1]


def _wait_until_running(job_id: str) -> None:
    for _ in range(120):
        state = subprocess.run(["squeue", "-h", "-r", "-j", job_id, "-o", "%T"], capture_output=True,
                               text=True).stdout.strip()
        if state == "RUNNING":
            return
        time.sleep(0.5)
    raise AssertionError(f"job {job_id} never started")


def test_the_closing_table_says_cancelled_not_ran() -> None:
    cancelled = sweep.CellResult(sweep.Cell("0.6.0", "hostile"), "cancelled", None,
                                 note="cancelled by SLURM at 2026-11-30T09:04:44 by scancel; see 1_0.out")
    lines = sweep.render_table([cancelled]).splitlines()
    assert lines[1].split() == ["0.6.0", "hostile", "cancelled", "-", "cancelled"]
    assert lines[2] == "1 cell: 0 ran, 0 current (skipped), 1 crashed, timed out, cancelled or errored"
    assert lines[3] == "  hostile · jax 0.6.0: cancelled by SLURM at 2026-11-30T09:04:44 by scancel; see 1_0.out"
    assert sweep.exit_code([cancelled], strict=True) == sweep.EXIT_FAILED
