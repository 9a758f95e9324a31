"""kit.matrix.slurm: the batch script, job facts, and reading back what an array's tasks left."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import pytest

from kit.matrix import slurm
from kit.matrix.slurm import ArrayTask, SlurmOptions, batch_script, landed_records
from kit.slurm.jobs import queued_states
from tests.local_slurm import checkout_copy


def test_the_batch_script_runs_line_i_of_the_cells_with_the_kit(tmp_path: Path) -> None:
    tasks = [ArrayTask("scaling", "0.4.35"), ArrayTask("scaling", "0.6.0", processes=2)]
    script = batch_script(tasks, tmp_path, SlurmOptions(partition="gpu", time="00:30:00"), ["--timeout", "600"],
                          python="/usr/bin/python3")
    assert "#SBATCH --array=0-1" in script
    assert "#SBATCH --ntasks=2" in script  # the largest cell's processes
    assert "#SBATCH --partition=gpu" in script
    assert "#SBATCH --time=00:30:00" in script
    assert f"#SBATCH --output={tmp_path}/%A_%a.out" in script
    assert 'SLURM_ARRAY_TASK_ID + 1' in script
    assert "export KIT_SRUN=1" in script
    assert script.rstrip().endswith('exec /usr/bin/python3 -m kit run "$check" "$version" --timeout 600')


def test_without_a_partition_or_time_slurm_defaults_apply(tmp_path: Path) -> None:
    script = batch_script([ArrayTask("scaling", "0.6.0")], tmp_path, SlurmOptions(), [])
    assert "--partition" not in script
    assert "--time" not in script
    assert "#SBATCH --ntasks=1" in script


def test_landed_records_are_matched_to_their_array_task(tmp_path: Path) -> None:
    def write(name: str, facts: dict | None) -> None:
        (tmp_path / name).write_text(json.dumps({"status": "ran", **({"slurm": facts} if facts else {})}))

    write("a.json", {"array_job_id": "12", "array_task_id": "1"})
    write("b.json", {"array_job_id": "99", "array_task_id": "0"})  # another job
    write("c.json", None)  # a local run
    (tmp_path / "d.json").write_text("{not json")
    found = landed_records(tmp_path, "12", since=0)
    assert list(found) == [1]
    assert found[1][0].name == "a.json"


def test_squeue_lines_become_task_states(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fake = tmp_path / "squeue"
    fake.write_text("#!/bin/sh\nprintf '0|RUNNING|vm\\n1|PENDING|\\n'\n")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ['PATH']}")
    assert queued_states("12") == {0: ("RUNNING", "vm"), 1: ("PENDING", "")}


def test_waiting_ends_when_squeue_keeps_failing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fake = tmp_path / "squeue"
    fake.write_text("#!/bin/sh\necho 'slurm_load_jobs error: Unable to contact slurm controller' >&2\nexit 1\n")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ['PATH']}")
    lines: list[str] = []
    landed = slurm.wait("12", [ArrayTask("scaling", "0.6.0")], tmp_path, tmp_path, 0, lines.append, poll_s=0)
    assert landed == {0: None}
    assert "stopped waiting for job 12" in lines[-1]

# --------------------------------------------------------------------------
# A real SLURM: scripts/slurm-local.sh starts one on this machine (tests/local_slurm.py).

@pytest.mark.integration
@pytest.mark.slurm
def test_a_two_cell_job_array_lands_both_records_and_the_report_names_the_job(
        local_slurm: dict[str, str], tmp_path: Path) -> None:
    copy = checkout_copy(tmp_path)
    # Small scaling cells, each as 2 processes started by srun inside its array task.
    toml = (copy / "matrix.toml").read_text(encoding="utf-8")
    toml = toml.replace("[checks.scaling]\n", "[checks.scaling]\nprocesses = 2\n", 1)
    for key, value in (("devices", "[2, 4]"), ("batch", "1024"), ("repeats", "2"), ("warmup", "1"),
                       ("modes", '["jit"]')):
        toml = re.sub(rf"(?m)^({key} = ).*$", rf"\g<1>{value}", toml, count=1)
    (copy / "matrix.toml").write_text(toml, encoding="utf-8")
    done = subprocess.run(["nox", "-s", "matrix", "--", "--slurm", "--only", "0.4.35,0.6.0", "--checks", "scaling"],
                          cwd=copy, env=local_slurm, capture_output=True, text=True, timeout=1500)
    output = done.stdout + done.stderr
    assert done.returncode == 0, output[-3000:]
    job_id = re.search(r"submitted SLURM job array (\d+)", output).group(1)  # type: ignore[union-attr]
    landed = [json.loads(p.read_text()) for p in (copy / "reports" / "results").glob("*.json")]
    by_version = {r["requested"]["jax"]: r for r in landed}
    assert sorted(by_version) == ["0.4.35", "0.6.0"], output[-3000:]
    assert {r["slurm"]["array_job_id"] for r in landed} == {job_id}
    assert sorted(r["slurm"]["array_task_id"] for r in landed) == ["0", "1"]
    assert all(r["slurm"]["node"] for r in landed)
    assert by_version["0.4.35"]["verdict"] == "affected", by_version["0.4.35"]["reason"]
    assert by_version["0.6.0"]["verdict"] == "unaffected", by_version["0.6.0"]["reason"]
    for record in landed:
        assert record["environment"]["process_count"] == 2
        assert {p["launched_by"] for p in record["evidence"]["processes"]} == {"cluster environment (e.g. srun)"}
    matrix_md = (copy / "reports" / "matrix.md").read_text(encoding="utf-8")
    assert f"SLURM job {job_id}_0" in matrix_md
    assert f"SLURM job {job_id}_1" in matrix_md
