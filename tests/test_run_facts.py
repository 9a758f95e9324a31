"""kit.run.facts: the facts of the process that runs a check (its machine, its SLURM job)."""

from __future__ import annotations

import pytest

from kit.matrix.slurm import job_label
from kit.run.facts import host_facts, job_facts


def test_job_facts_name_the_job_array_task_and_node(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("SLURM_JOB_ID", "SLURM_ARRAY_JOB_ID", "SLURM_ARRAY_TASK_ID", "SLURMD_NODENAME"):
        monkeypatch.delenv(name, raising=False)
    assert job_facts() is None
    monkeypatch.setenv("SLURM_JOB_ID", "13")
    monkeypatch.setenv("SLURM_ARRAY_JOB_ID", "12")
    monkeypatch.setenv("SLURM_ARRAY_TASK_ID", "1")
    monkeypatch.setenv("SLURMD_NODENAME", "node01")
    facts = job_facts()
    assert facts is not None and facts["job_id"] == "13"
    assert job_label(facts) == "SLURM job 12_1 on node01"


def test_host_facts_say_which_machine_without_jax() -> None:
    facts = host_facts("3.12")
    assert facts["python"] == "3.12" and facts["host"] and facts["platform"]
    assert set(facts) == {"python", "platform", "host", "cpu_model"}
