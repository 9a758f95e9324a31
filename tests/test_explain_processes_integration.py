"""explain --processes on real releases: examples/programs/distributed_slogdet.py, which calls
``jax.distributed.initialize()`` with no arguments, as 2 and 4 local processes on CPU, and as SLURM tasks."""

from __future__ import annotations

import dataclasses
import json
import os
from pathlib import Path
from typing import Any, Iterator

import pytest

from kit import explain
from kit.config import load_matrix
from tests.local_slurm import local_slurm  # noqa: F401  (the fixture)
from tests.real_releases import ROOT, release_python

pytestmark = pytest.mark.integration
PROGRAM = "examples/programs/distributed_slogdet.py"


def _explain(tmp_path: Path, capsys: pytest.CaptureFixture[str], release: str,
             *argv: str) -> tuple[int, list[str], dict[str, Any]]:
    release_python(release)  # built first, era-correctly, where it is not
    matrix = dataclasses.replace(load_matrix(ROOT / "matrix.toml"), results_dir=tmp_path / "reports" / "results")
    code = explain.main(matrix, ["--called-from", str(ROOT), PROGRAM, "--releases", release, "--timeout", "300",
                                 *argv], log=lambda line: None)
    record = json.loads((tmp_path / "reports" / f"explain-distributed_slogdet-{release}.json").read_text())
    return code, capsys.readouterr().out.splitlines(), record


@pytest.mark.parametrize("processes", [2, 4])
def test_the_ranks_join_and_one_slogdet_is_split_over_every_device_of_every_process(
        processes: int, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, lines, record = _explain(tmp_path, capsys, "0.6.0", "--processes", str(processes))
    assert code == 0, lines
    assert lines[1] == "0.6.0: every linalg op split (lu); no unexpected collective", lines
    assert record["status"] == "ran", record["reason"]
    assert [m["partitions"] for m in record["modules"]] == [4]  # one module over the 4 devices of all processes
    ranks = record["processes"]["ranks"]
    assert record["processes"]["agree"] is True
    assert [(r["process_index"], r["process_count"], r["local"], r["count"]) for r in ranks] == [
        (rank, processes, 4 // processes, 4) for rank in range(processes)]
    assert {r["cluster"] for r in ranks} == {"kit"}
    assert all(line.endswith("right") for line in record["run"]["output_tail"] if "log|det| error" in line)


def test_a_release_whose_cpu_client_ignores_jax_distributed_is_said_to_never_join(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, lines, record = _explain(tmp_path, capsys, "0.4.20", "--processes", "2")
    assert "the ranks never joined: each saw only its own devices" in lines[1]
    assert "no CPU collectives across processes" in lines[1]
    assert {r.get("process_count") for r in record["processes"]["ranks"]} == {None}  # each saw process_count 1


@pytest.fixture
def slurm_env(local_slurm: dict[str, str]) -> Iterator[None]:  # noqa: F811
    saved = dict(os.environ)
    os.environ.update({"SLURM_CONF": local_slurm["SLURM_CONF"],
                       # the test node may have fewer CPUs than tasks: SLURM may put several on one CPU
                       "KIT_SRUN_ARGS": "--overcommit"})
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved)


@pytest.mark.slurm
@pytest.mark.parametrize("release, split", [("0.6.0", True), ("0.4.35", False)])
def test_srun_starts_the_ranks_as_slurm_tasks_and_each_dumps_its_own(
        slurm_env: None, release: str, split: bool, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, lines, record = _explain(tmp_path, capsys, release, "--processes", "2", "--launcher", "srun")
    assert code == 0, lines
    assert record["processes"]["how"].startswith("2 SLURM tasks started by srun")
    ranks = record["processes"]["ranks"]
    assert [(r["process_index"], r["process_count"], r["modules"]) for r in ranks] == [(0, 2, 1), (1, 2, 1)]
    assert {r["cluster"] for r in ranks} == {"the cluster's own (srun: SLURM's variables)"}
    assert record["processes"]["agree"] is True
    if split:
        assert lines[1] == "0.6.0: every linalg op split (lu); no unexpected collective"
    else:  # gloo turned on by the kit under srun too: 0.4.35 runs, and gathers the batch
        assert {r["cpu_collectives"] for r in ranks} == {"jax_cpu_collectives_implementation=gloo (set by the kit)"}
        assert any("known problem sharded-slogdet (" in line for line in lines)
