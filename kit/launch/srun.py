"""``--launcher srun``: SLURM starts the N processes, one task each, as a step of the job the kit runs in.

One ``srun`` command starts every task with the same environment; JAX's own
SLURM detection gives ``jax.distributed.initialize()`` the coordinator (the
step's first node, a port from the job id), the task count and each task's
rank, and each rank fills ``{rank}`` in the kit's values with its
``SLURM_PROCID`` (`repro.launch_rank`). Outside an allocation srun asks the
controller for one (``--ntasks=N``); inside one (``salloc``, an ``sbatch``
script) it runs as a step of it. ``--kill-on-bad-exit`` ends every task when
one fails, ``--label`` prefixes each line with its task; SIGTERM to srun
cancels the step (the kit's timeout and Ctrl-C).

Across nodes, SLURM places the tasks (one per node with
``--ntasks-per-node=1`` in ``KIT_SRUN_ARGS``); the checkout, the
environments and the temp folder the dumps go to must then be the same path
on every node (docs/cluster.md).
"""

from __future__ import annotations

import os
import shlex
import shutil
from dataclasses import dataclass
from typing import Mapping, Sequence

from .spec import LAUNCHER_ENV, Launch, LaunchSpec

EXTRA_ENV = "KIT_SRUN_ARGS"
"""More srun options, split as a shell would (``--ntasks-per-node=1 --partition=gpu``)."""


@dataclass(frozen=True)
class Srun:
    name: str = "srun"
    summary: str = "SLURM: one task per process, started by srun (inside an allocation: a step of it)"

    def problem(self, spec: LaunchSpec) -> str:
        if spec.hosts:
            return "srun places its tasks itself: --hosts is for --launcher ssh"
        if shutil.which("srun") is None:
            return "srun is not on PATH here: this machine is not a SLURM client"
        return ""

    def launch(self, spec: LaunchSpec, command: Sequence[str], env: Mapping[str, str], cwd: str) -> Launch:
        extra = shlex.split(os.environ.get(EXTRA_ENV, ""))
        srun = ("srun", f"--ntasks={spec.processes}", "--kill-on-bad-exit=1", "--cpu-bind=none", "--label",
                *extra, *command)
        job = os.environ.get("SLURM_JOB_ID")
        where = f"a step of SLURM job {job}" if job else "a SLURM job of its own"
        return Launch(commands=(srun,), envs=({**env, LAUNCHER_ENV: self.name},),
                      how=f"{spec.processes} SLURM tasks started by srun, {where}", prefixes=("",))


SRUN = Srun()
