"""SLURM job arrays, as both drivers submit them: the matrix (one cell per task) and bisect (one probe per task).

What the two share lives here, below both (they may not import each other):
whether ``sbatch`` is here and the controller answers, the array's ``#SBATCH`` header, submitting a
script and reading back its job id, which tasks squeue still lists (and on
which node), and where a job's files go. What a task runs and what it leaves
(a record, a probe's observation) is each driver's own: kit/matrix/slurm.py,
kit/bisect/probe/cluster.py.

Everything a task needs must be on a folder every node shares: this
checkout, its ``.nox/jax-envs`` (built before submission, on the login node)
and ``reports/`` (docs/cluster.md: "What the nodes must share"). sbatch passes the submitting
shell's environment on (its default ``--export=ALL``), so the JAX/XLA
variables set there reach the tasks, and each task's identity says which it saw.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from ..errors import UsageError


REPO_ROOT = Path(__file__).resolve().parents[2]

POLL_S = 3.0

# squeue failing this many polls in a row (about a minute) ends the waiting, not the job.
SQUEUE_FAILURES = 20


@dataclass(frozen=True)
class SlurmOptions:
    partition: str | None = None
    time: str | None = None
    wait: bool = True


def require_sbatch() -> None:
    if not shutil.which("sbatch"):
        raise UsageError("--slurm needs SLURM's sbatch, which is not on PATH here",
                         "run it on a login node of the cluster, or start the local test cluster: "
                         "scripts/slurm-local.sh up && eval \"$(scripts/slurm-local.sh env)\"")


# `scontrol ping` answers in milliseconds whether the controller is up or down, where sbatch and
# squeue retry a silent controller for ten seconds to a minute each before they give up.
PING_TIMEOUT_S = 15


def require_controller() -> None:
    """One sentence, at once, when no SLURM controller answers: before any environment is built or job sent."""
    scontrol = shutil.which("scontrol")
    if scontrol is None:
        return  # an unusual install: sbatch will say what it finds
    try:
        done = subprocess.run([scontrol, "ping"], capture_output=True, text=True, timeout=PING_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        answer = f"no answer within {PING_TIMEOUT_S} s"
    else:
        if done.returncode == 0 and " is DOWN" not in done.stdout:
            return
        said = [line.strip() for line in (done.stdout + done.stderr).splitlines() if line.strip().strip("*")]
        answer = said[0] if said else f"exit code {done.returncode}"
    conf = os.environ.get("SLURM_CONF") or "the system's slurm.conf"
    raise UsageError(f"--slurm: the SLURM controller is not answering (scontrol ping: {answer}); "
                     "nothing was built or submitted",
                     f"start the controller, or point SLURM_CONF (now {conf}) at a running cluster; the local test "
                     "cluster: scripts/slurm-local.sh up && eval \"$(scripts/slurm-local.sh env)\"")


def array_header(job_name: str, count: int, job_dir: Path, ntasks: int, options: SlurmOptions) -> list[str]:
    """The ``#SBATCH`` lines of an array of ``count`` tasks, each task's output in ``job_dir/JOB_TASK.out``."""
    lines = ["#!/usr/bin/env bash", f"#SBATCH --job-name={job_name}", f"#SBATCH --array=0-{count - 1}",
             f"#SBATCH --output={job_dir}/%A_%a.out", f"#SBATCH --ntasks={ntasks}"]
    if options.partition:
        lines.append(f"#SBATCH --partition={options.partition}")
    if options.time:
        lines.append(f"#SBATCH --time={options.time}")
    return lines


def sbatch(script: Path) -> str:
    """Submit a job script; its job id. sbatch's refusal is one UsageError naming the script."""
    done = subprocess.run(["sbatch", "--parsable", str(script)], capture_output=True, text=True, cwd=REPO_ROOT)
    if done.returncode != 0:
        raise UsageError(f"sbatch refused the job: {done.stderr.strip() or done.stdout.strip()}",
                         f"the script is {script}; check --partition and --time against `sinfo`")
    return done.stdout.strip().split(";")[0]


def queued_states(job_id: str) -> dict[int, tuple[str, str]] | None:
    """Array task -> (state, node) for the tasks still queued or running; None if squeue failed."""
    done = subprocess.run(["squeue", "-h", "-r", "-j", job_id, "-o", "%K|%T|%N"], capture_output=True, text=True)
    if done.returncode != 0:
        # squeue forgets a finished job quickly; "Invalid job id" then means "all done".
        return {} if "Invalid job id" in done.stderr else None
    states: dict[int, tuple[str, str]] = {}
    for line in done.stdout.splitlines():
        task, state, node = (line.split("|") + ["", ""])[:3]
        if task.strip().isdigit():
            states[int(task)] = (state.strip(), node.strip())
    return states


def new_job_dir(base: Path) -> Path:
    """A new folder for one job's files, named by the UTC time (with microseconds: bisect submits round after round)."""
    return base / datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%S%fZ")
