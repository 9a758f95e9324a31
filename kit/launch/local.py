"""``--launcher local``: N processes on this machine, joined over the loopback (coordinator 127.0.0.1, a free port).

Each rank is its own command with its own environment (`spec.rank_env`), so
its dump, its output and its exit are its own; the kit watches them as one
group (`kit.run.multiprocess.ProcessGroup`: one that fails or hangs takes the
others down).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Sequence

from .spec import Launch, LaunchSpec, free_port, prefixes, rank_env


@dataclass(frozen=True)
class Local:
    name: str = "local"
    summary: str = "N processes on this machine, jax.distributed over the loopback"

    def problem(self, spec: LaunchSpec) -> str:
        return "local runs on this machine: --hosts is for --launcher ssh" if spec.hosts else ""

    def launch(self, spec: LaunchSpec, command: Sequence[str], env: Mapping[str, str], cwd: str) -> Launch:
        coordinator = f"127.0.0.1:{free_port()}"
        return Launch(commands=tuple(tuple(command) for _ in range(spec.processes)),
                      envs=tuple(rank_env(env, coordinator, spec.processes, rank, self.name)
                                 for rank in range(spec.processes)),
                      how=f"{spec.processes} local processes, coordinator {coordinator}",
                      prefixes=prefixes(spec.processes))


LOCAL = Local()
