"""What every launcher is given and gives back: N processes of one command, and each rank's place among them.

A `LaunchSpec` is the question (how many processes, how many devices each,
on which hosts); a `Launch` is one launcher's answer: the commands to start,
each with its own environment, and a sentence saying how. Each rank of a
local or ssh launch gets ``JAX_COORDINATOR_ADDRESS`` (which every JAX
release's ``jax.distributed.initialize()`` reads by itself) and
``JAX_NUM_PROCESSES`` / ``JAX_PROCESS_ID`` (which no release reads: the
kit's cluster in the rank answers JAX with them, `repro.launch_rank`).
Under srun, SLURM's own variables answer and the kit sets none of them.
"""

from __future__ import annotations

import socket
from dataclasses import dataclass, field
from typing import Mapping, Protocol, Sequence

from ..errors import UsageError

COORDINATOR_ENV = "JAX_COORDINATOR_ADDRESS"
PROCESSES_ENV = "JAX_NUM_PROCESSES"
PROCESS_ID_ENV = "JAX_PROCESS_ID"
LAUNCHER_ENV = "KIT_LAUNCHER"
"""Which launcher started a rank: `repro.launch_rank` turns gloo on for CPU collectives where it is set."""
RANK = "{rank}"
"""Where a value differs per rank but one command starts them all (srun): the rank fills it in
(`repro.launch_rank.per_rank`), so each rank's dump and facts go to a folder of its own."""


@dataclass(frozen=True)
class LaunchSpec:
    """N processes of one program: what a launcher is asked to start."""

    processes: int
    devices_per_process: int | None = None
    """Forced CPU host devices in each process; None: each process's own devices (a GPU's)."""
    hosts: tuple[str, ...] = ()
    """For ssh: the hosts, ranks spread over them in order (rank r on host r * len(hosts) // processes)."""

    def __post_init__(self) -> None:
        if self.processes < 1:
            raise UsageError(f"--processes must be 1 or more, got {self.processes}", "e.g. --processes 2")


@dataclass(frozen=True)
class Launch:
    """A launcher's answer: the commands to start (one per rank, or one for all), each with its environment."""

    commands: tuple[tuple[str, ...], ...]
    envs: tuple[Mapping[str, str], ...]
    how: str
    """In words, for the log and the record: "2 local processes, coordinator 127.0.0.1:41234"."""
    prefixes: tuple[str, ...] = field(default=())
    """Each command's output prefix (``[p1] ``); srun labels its tasks' lines itself (``1: ``)."""


class Launcher(Protocol):
    """One way to start N processes: a frozen value found by its name (`kit.launch.named`)."""

    @property
    def name(self) -> str:
        """What ``--launcher`` calls it."""

    @property
    def summary(self) -> str:
        """What it does, in a few words for ``--help``."""

    def problem(self, spec: LaunchSpec) -> str:
        """Why this launcher cannot start ``spec`` here ("" when it can): said before anything is built."""

    def launch(self, spec: LaunchSpec, command: Sequence[str], env: Mapping[str, str], cwd: str) -> Launch:
        """The commands that start ``command`` as ``spec.processes`` ranks in ``cwd``, each with ``env`` and its place."""


def rank_env(env: Mapping[str, str], coordinator: str, processes: int, rank: int, launcher: str) -> dict[str, str]:
    """``env`` with this rank's place in the job, and ``{rank}`` in any value replaced by its number."""
    own = {key: value.replace(RANK, str(rank)) for key, value in env.items()}
    return {**own, COORDINATOR_ENV: coordinator, PROCESSES_ENV: str(processes), PROCESS_ID_ENV: str(rank),
            LAUNCHER_ENV: launcher}


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port free on this machine now (the coordinator binds it a moment later)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind((host, 0))
        return int(probe.getsockname()[1])


def prefixes(processes: int) -> tuple[str, ...]:
    """Each rank's output prefix: ``[p0] ``, ``[p1] ``... (none for a single process)."""
    return tuple(f"[p{rank}] " if processes > 1 else "" for rank in range(processes))
