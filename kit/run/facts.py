"""Facts about the process that runs a check: which machine it is on, and which SLURM job it belongs to.

Records quote them so a reader knows where a result came from (the repro adds
what JAX saw; these cover runs that never reached JAX, and jobs).
"""

from __future__ import annotations

import os
import platform
import socket
from typing import Any

from repro.environment import cpu_model  # stdlib-only: one reading of the CPU for both halves


def host_facts(python: str | None) -> dict[str, Any]:
    """What this machine is, for records of runs that never reached JAX."""
    return {
        "python": python,
        "platform": platform.platform(),
        "host": socket.gethostname(),
        "cpu_model": cpu_model(),
    }


def job_facts() -> dict[str, Any] | None:
    """Which SLURM job, array task and node this process runs in; None outside SLURM."""
    if "SLURM_JOB_ID" not in os.environ:
        return None
    env = os.environ
    return {
        "job_id": env.get("SLURM_JOB_ID"),
        "array_job_id": env.get("SLURM_ARRAY_JOB_ID"),
        "array_task_id": env.get("SLURM_ARRAY_TASK_ID"),
        "node": env.get("SLURMD_NODENAME"),
        "job_name": env.get("SLURM_JOB_NAME"),
    }
