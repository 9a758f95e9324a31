"""How N processes of one program start: a launcher per way, each one frozen value found by its name.

``local`` (this machine, the loopback), ``srun`` (SLURM tasks) and ``ssh``
(named hosts) each answer the same `LaunchSpec` with a `Launch`: the
commands and each rank's environment. Running and watching them is
`kit.run.multiprocess`'s; what a rank does to join its partners is
`repro.launch_rank`'s. docs/cluster.md.
"""

from __future__ import annotations

import difflib

from ..errors import UsageError
from .local import LOCAL
from .spec import (COORDINATOR_ENV, LAUNCHER_ENV, PROCESS_ID_ENV, PROCESSES_ENV, RANK, Launch, Launcher,
                   LaunchSpec, free_port)
from .srun import SRUN
from .ssh import NEVER_CONNECTED, SSH

__all__ = ["LAUNCHERS", "NEVER_CONNECTED", "named", "checked", "Launch", "Launcher", "LaunchSpec", "free_port", "RANK",
           "COORDINATOR_ENV", "PROCESSES_ENV", "PROCESS_ID_ENV", "LAUNCHER_ENV"]

LAUNCHERS: dict[str, Launcher] = {launcher.name: launcher for launcher in (LOCAL, SRUN, SSH)}


def named(name: str) -> Launcher:
    """The launcher called ``name``; a UsageError naming the others (and the nearest) otherwise."""
    if name in LAUNCHERS:
        return LAUNCHERS[name]
    near = difflib.get_close_matches(name, list(LAUNCHERS), n=1)
    hint = f"did you mean {near[0]}? " if near else ""
    raise UsageError(f"there is no launcher {name!r}; {hint}the kit has {', '.join(LAUNCHERS)}",
                     "e.g. --launcher local (docs/cluster.md)")


def checked(name: str, spec: LaunchSpec) -> Launcher:
    """The launcher, refused with its own reason where it cannot start ``spec`` here."""
    launcher = named(name)
    problem = launcher.problem(spec)
    if problem:
        raise UsageError(f"--launcher {name} cannot start {spec.processes} processes: {problem}",
                         "docs/cluster.md says what each launcher needs")
    return launcher
