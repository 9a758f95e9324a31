"""kit.run.facts: the facts of the process that runs a check (its machine, its SLURM job)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from kit.records import mismatch
from kit.run.facts import hardware_facts, host_facts, identity_here, job_facts, job_label
from repro import environment


def test_job_facts_name_the_job_array_task_and_node(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("SLURM_JOB_ID", "SLURM_ARRAY_JOB_ID", "SLURM_ARRAY_TASK_ID", "SLURMD_NODENAME"):
        monkeypatch.delenv(name, raising=False)
    assert job_facts() is None
    monkeypatch.setenv("SLURM_JOB_ID", "13")
    monkeypatch.setenv("SLURM_ARRAY_JOB_ID", "12")
    monkeypatch.setenv("SLURM_ARRAY_TASK_ID", "1")
    monkeypatch.setenv("SLURMD_NODENAME", "node01")
    facts = job_facts()
    assert facts is not None
    assert facts["job_id"] == "13"
    assert job_label(facts) == "SLURM job 12_1 on node01"


def test_host_facts_say_which_machine_without_jax() -> None:
    facts = host_facts("3.12")
    assert facts["python"] == "3.12"
    assert facts["host"]
    assert facts["platform"]
    assert set(facts) == {"python", "platform", "host", "cpu_model"}


def test_a_job_is_named_by_its_array_task_and_node() -> None:
    assert job_label({"job_id": "13", "array_job_id": "12", "array_task_id": "1", "node": "node01"}) \
        == "SLURM job 12_1 on node01"
    assert job_label({"job_id": "7"}) == "SLURM job 7"
    assert job_label(None) == ""


def test_the_hardware_of_a_run_is_what_its_backend_uses(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    assert set(hardware_facts("cpu")) == {"cpu"}  # a CPU run on a GPU machine measures what one without GPUs does
    # A GPU run names the GPUs and their driver, as nvidia-smi lists them.
    fake = tmp_path / "nvidia-smi"
    fake.write_text("#!/bin/sh\necho 'NVIDIA H100 80GB HBM3, 550.54.15'\necho 'NVIDIA H100 80GB HBM3, 550.54.15'\n")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setattr(environment, "_GPU_FACTS", {})
    assert hardware_facts("cuda") == {"cpu": environment.cpu_model(), "gpu": "2 x NVIDIA H100 80GB HBM3",
                                      "gpu_driver": "550.54.15"}


def test_the_identity_here_holds_the_jax_variables_set_here(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("JAX_THREEFRY_PARTITIONABLE", "1")
    here = identity_here(subject={"script_sha256": "abc"}, jax="0.5.0", backend="cpu", python="3.13",
                         packages={"jaxlib": "0.5.0"}, requirements=["jax[cpu]==0.5.0"], exclude_newer=None)
    assert here.variables["JAX_THREEFRY_PARTITIONABLE"] == "1"
    assert here.hardware == {"cpu": environment.cpu_model()}
    monkeypatch.delenv("JAX_THREEFRY_PARTITIONABLE")
    without = identity_here(subject={"script_sha256": "abc"}, jax="0.5.0", backend="cpu", python="3.13",
                            packages={"jaxlib": "0.5.0"}, requirements=["jax[cpu]==0.5.0"], exclude_newer=None)
    assert "JAX_THREEFRY_PARTITIONABLE unset there, 1 here" in mismatch(without, here)
