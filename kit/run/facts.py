"""Facts about the process that runs a check: which machine it is on, and which SLURM job it belongs to.

Records quote them so a reader knows where a result came from (the repro adds
what JAX saw; these cover runs that never reached JAX, and jobs). The
hardware and the JAX/XLA variables set here are also part of a run's
identity (`identity_here`): what a probe or a record must share to be reused.
"""

from __future__ import annotations

import os
import platform
import socket
from collections.abc import Mapping, Sequence

from repro.environment import cpu_model, gpu_facts, jax_variables  # stdlib-only: one reading for both halves

from ..errors import UsageError
from ..records import Identity, run_identity
from ..json_types import JsonObject


_PLATFORM_NAMES = {"cpu": {"cpu"}, "cuda": {"cuda", "gpu"}}


def require_platform(backend: str | None, environ: Mapping[str, str] = os.environ) -> None:
    """`UsageError` when ``JAX_PLATFORMS`` (which the check inherits) keeps JAX off the backend the run is for
    (None: an existing interpreter's, which its JAX decides).

    ``JAX_PLATFORMS=cuda`` on a run for cpu made every check die at JAX's
    start (``AssertionError``, nothing naming the variable) and wrote a record
    of it; the variable is the user's, so it is named before anything runs.
    """
    value = environ.get("JAX_PLATFORMS", "").strip()
    if backend is None:
        return
    platforms = {part.strip().lower() for part in value.split(",") if part.strip()}
    if not platforms or platforms & _PLATFORM_NAMES.get(backend, {backend}):
        return
    raise UsageError(f"JAX_PLATFORMS={value} in the environment keeps JAX off {backend}, the backend this run is for: "
                     "JAX would not start in the check (or would run it elsewhere), so nothing was run or recorded",
                     f"unset JAX_PLATFORMS (the kit chooses the platform from --backend, now {backend}), or set it to "
                     f"include {backend}")


def host_facts(python: str | None) -> JsonObject:
    """What this machine is, for records of runs that never reached JAX."""
    return {
        "python": python,
        "platform": platform.platform(),
        "host": socket.gethostname(),
        "cpu_model": cpu_model(),
    }


def job_facts() -> JsonObject | None:
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


def job_label(facts: Mapping[str, object] | None) -> str:
    """``SLURM job 12_1 on node01``: how a report names the job that ran a record or a probe ("" outside SLURM)."""
    if not facts:
        return ""
    array, task = facts.get("array_job_id"), facts.get("array_task_id")
    job = f"{array}_{task}" if array and task is not None else str(facts.get("job_id"))
    return f"SLURM job {job}" + (f" on {facts['node']}" if facts.get("node") else "")


def hardware_facts(backend: str) -> JsonObject:
    """The hardware a run on ``backend`` uses here: the CPU model, and for a GPU backend the GPUs and driver.

    Only what the backend uses: a CPU run on a GPU machine measures the same
    as one on a machine without GPUs.
    """
    facts: JsonObject = {"cpu": cpu_model()}
    if backend not in ("cpu",):
        facts.update(gpu_facts())
    return facts


def identity_here(*, subject: Mapping[str, object], jax: str, backend: str, python: str | None,
                  packages: Mapping[str, str], requirements: Sequence[str], exclude_newer: str | None,
                  commit: str | None = None) -> Identity:
    """The identity of a run made in this process: the given install, this hardware, the variables set here."""
    return run_identity(subject=subject, jax=jax, backend=backend, python=python, packages=packages,
                        requirements=requirements, exclude_newer=exclude_newer, hardware=hardware_facts(backend),
                        variables=jax_variables(os.environ), commit=commit)
