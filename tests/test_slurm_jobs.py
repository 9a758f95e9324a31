"""kit.slurm.jobs: what the matrix's and bisect's job arrays share (sbatch, the header, squeue)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from kit.errors import UsageError
from kit.slurm import jobs as slurm_jobs
from kit.slurm.jobs import SlurmOptions, array_header


def test_the_header_asks_for_an_array_with_each_task_s_output_in_the_job_folder(tmp_path: Path) -> None:
    lines = array_header("jax-kit-bisect", 3, tmp_path, 2, SlurmOptions(partition="gpu", time="00:10:00"))
    assert lines[:5] == ["#!/usr/bin/env bash", "#SBATCH --job-name=jax-kit-bisect", "#SBATCH --array=0-2",
                         f"#SBATCH --output={tmp_path}/%A_%a.out", "#SBATCH --ntasks=2"]
    assert lines[5:] == ["#SBATCH --partition=gpu", "#SBATCH --time=00:10:00"]
    assert len(array_header("x", 1, tmp_path, 1, SlurmOptions())) == 5  # the cluster's defaults otherwise


def test_sbatch_s_refusal_is_one_sentence_naming_the_script(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fake = tmp_path / "sbatch"
    fake.write_text("#!/bin/sh\necho 'sbatch: error: invalid partition specified: gpu' >&2\nexit 1\n")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ['PATH']}")
    with pytest.raises(UsageError, match="invalid partition specified") as caught:
        slurm_jobs.sbatch(tmp_path / "job.sh")
    assert str(tmp_path / "job.sh") in caught.value.tip
    fake.write_text("#!/bin/sh\necho '42;cluster'\n")
    assert slurm_jobs.sbatch(tmp_path / "job.sh") == "42"


def test_sbatch_missing_is_a_usage_error_with_the_way_out(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", "/nonexistent")
    with pytest.raises(UsageError) as caught:
        slurm_jobs.require_sbatch()
    assert "scripts/slurm-local.sh up" in caught.value.render()


def test_squeue_forgetting_the_job_means_every_task_is_done(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fake = tmp_path / "squeue"
    fake.write_text("#!/bin/sh\necho 'slurm_load_jobs error: Invalid job id specified' >&2\nexit 1\n")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ['PATH']}")
    assert slurm_jobs.queued_states("12") == {}
