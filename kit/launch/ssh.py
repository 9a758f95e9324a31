"""``--launcher ssh``: one process per rank on the hosts named (``--hosts a,b``), each started through ssh.

Rank r runs on host ``r * len(hosts) // N`` (one per host when N equals the
hosts), in the folder the program was called from, with its place in the
job in its environment as a local rank has it (`spec.rank_env`); the
coordinator is the first host, on a port free here (``KIT_SSH_PORT`` to
choose one free there). ``ssh -tt`` gives each remote process a terminal, so
it is hung up when the kit ends the ssh (timeout, a failed partner, Ctrl-C).
``BatchMode`` refuses a password prompt: keys must be set up. The hosts must
share the kit's paths (the checkout, the environments, the temp folder the
dumps go to): docs/cluster.md.
"""

from __future__ import annotations

import os
import re
import shlex
from dataclasses import dataclass
from typing import Mapping, Sequence

from .spec import Launch, LaunchSpec, free_port, prefixes, rank_env

PORT_ENV = "KIT_SSH_PORT"
CONNECT_TIMEOUT_S = 20
HOST = re.compile(r"(?:[A-Za-z0-9._-]+@)?(?:[A-Za-z0-9_][A-Za-z0-9._-]*|\[[0-9A-Fa-f:.]+\])")
"""A host ``--hosts`` may name: a name or an IPv4 address (``user@`` before it allowed), or an IPv6 one in
brackets; never a word starting with ``-``."""
NEVER_CONNECTED = re.compile(r"ssh: (?:connect to host|Could not resolve hostname)[^\n]*|"
                             r"Connection to \S+ port \d+ timed out|"
                             r"Connection (?:timed out|refused)[^\n]*during banner exchange|"
                             r"Permission denied \(publickey[^\n]*|Host key verification failed\.", re.IGNORECASE)
"""What ssh prints when it never reached the program (it exits 255 then)."""
_PASSED = ("PATH", "HOME", "USER", "LANG", "TMPDIR")
"""What the remote login gives already: not passed (the rest of the run's variables are)."""


@dataclass(frozen=True)
class Ssh:
    name: str = "ssh"
    summary: str = "one process per rank on the hosts of --hosts, each through ssh"

    def problem(self, spec: LaunchSpec) -> str:
        if not spec.hosts:
            return "ssh needs the hosts to start the processes on (--hosts a,b)"
        odd = next((host for host in spec.hosts if not HOST.fullmatch(host)), None)
        if odd is not None:  # ssh would read "-oProxyCommand=..." as an option, and a space splits a word
            return (f"--hosts {odd!r} is not a host name: give names or addresses (letters, digits, '.', '-', "
                    "'_', ':', user@ before them), none starting with '-'")
        if len(spec.hosts) > spec.processes:
            return f"{len(spec.hosts)} hosts for {spec.processes} processes: give --processes {len(spec.hosts)}"
        return ""

    def launch(self, spec: LaunchSpec, command: Sequence[str], env: Mapping[str, str], cwd: str) -> Launch:
        port = os.environ.get(PORT_ENV, "") or str(free_port())
        coordinator = f"{spec.hosts[0]}:{port}"
        commands, envs = [], []
        for rank in range(spec.processes):
            host = spec.hosts[rank * len(spec.hosts) // spec.processes]
            own = rank_env(env, coordinator, spec.processes, rank, self.name)
            # What the kit set or changed travels; the rest of this session's variables are the remote login's own.
            sent = " ".join(f"{key}={shlex.quote(value)}" for key, value in sorted(own.items())
                            if key not in _PASSED and os.environ.get(key) != value)
            remote = f"cd {shlex.quote(cwd)} && exec env {sent} {shlex.join(command)}"
            # "--": whatever the host is, ssh reads it as the host. ConnectTimeout: a host that never answers is said
            # as that in seconds, not as the program running out of its time.
            commands.append(("ssh", "-tt", "-o", "BatchMode=yes", "-o", f"ConnectTimeout={CONNECT_TIMEOUT_S}", "--",
                             host, remote))
            envs.append(dict(env))
        return Launch(commands=tuple(commands), envs=tuple(envs),
                      how=f"{spec.processes} processes over ssh on {', '.join(spec.hosts)}, coordinator {coordinator}",
                      prefixes=prefixes(spec.processes))


SSH = Ssh()
