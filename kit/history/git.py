"""Running git on a clone of JAX: one helper, so every git failure reads the same way.

Everything in :mod:`kit.history` goes through :func:`git`. It runs none of
the programs a clone's own config can name (hooks, fsmonitor, pager, diff
drivers, upload-pack: ``_INERT``, ``_SUBCOMMAND_FLAGS``), it never prompts
(a clone that wants credentials fails instead of hanging a bisect), it has a
time limit, and a failure is a :class:`GitFailed` carrying git's own last
words; :func:`looks_like_network` tells an unreachable remote from anything
else, because the two mean different things to the user (exit 4 vs a fix).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path
from typing import Sequence

from ..errors import UsageError

DEFAULT_TIMEOUT_S = 120.0

# What git prints when the remote cannot be reached at all (DNS, routing, proxy, TLS).
_NETWORK_WORDS = ("could not resolve host", "failed to connect", "connection timed out", "network is unreachable",
                  "connection refused", "could not read from remote repository", "unable to access",
                  "operation timed out", "timed out after", "proxy", "ssl", "name or service not known")


class GitFailed(Exception):
    """git exited non-zero (or ran out of time); ``stderr`` holds its words."""

    def __init__(self, args: Sequence[str], stderr: str) -> None:
        self.stderr = stderr.strip()
        self.last = self.stderr.splitlines()[-1] if self.stderr else "no output"
        """git's last line: usually the one that says why."""
        super().__init__(f"git {' '.join(args[:3])} failed: {self.last}")


def git_executable() -> str:
    """The git on PATH; a UsageError naming the fix when there is none."""
    found = shutil.which("git")
    if found is None:
        raise UsageError("--commits needs git, and none is on PATH", "install git (e.g. apt-get install git)")
    return found


def git(repo: Path | None, *args: str, stdin: bytes | None = None, timeout: float = DEFAULT_TIMEOUT_S) -> str:
    """Run ``git -C repo ARGS`` and return its stdout as text (``repo`` None: no -C)."""
    return git_bytes(repo, *args, stdin=stdin, timeout=timeout).decode("utf-8", errors="replace")


def git_bytes(repo: Path | None, *args: str, stdin: bytes | None = None,
              timeout: float = DEFAULT_TIMEOUT_S) -> bytes:
    """As :func:`git`, stdout as bytes (file contents)."""
    command = [git_executable(), "--no-pager", *_INERT, *(["-C", str(repo)] if repo is not None else []),
               *_inert_args(args)]
    try:
        proc = subprocess.run(command, input=stdin, capture_output=True, timeout=timeout, env=_quiet_env())
    except subprocess.TimeoutExpired:
        raise GitFailed(args, f"no answer within {timeout:.0f} s (timed out after {timeout:.0f} s)") from None
    if proc.returncode != 0:
        raise GitFailed(args, proc.stderr.decode("utf-8", errors="replace"))
    return proc.stdout


# A clone handed to the kit (--jax-repo) is data, not a program: its own config must not run anything. These
# settings come after every config file, so they win over the clone's: no hooks (a fetch runs
# reference-transaction), no fsmonitor (a command that reads the index starts it), no pager, no `ext::`
# transport, no credential helper, no ssh or git:// proxy command of the clone's, no gpg for a log's signatures. Aliases never shadow a
# built-in command, and the kit runs built-ins only.
_INERT = ("-c", "core.hooksPath=/dev/null", "-c", "core.fsmonitor=false", "-c", "core.pager=cat",
          "-c", "protocol.ext.allow=never", "-c", "credential.helper=", "-c", "core.sshCommand=ssh",
          "-c", "core.gitProxy=", "-c", "log.showSignature=false")  # a signature shown runs gpg.program

# The commands that can show a diff run the clone's diff drivers (diff.<x>.textconv, diff.external) unless told
# not to; a fetch runs the remote's configured upload-pack (remote.<x>.uploadpack) unless given git's own.
_SUBCOMMAND_FLAGS = {"log": ("--no-textconv", "--no-ext-diff"), "show": ("--no-textconv", "--no-ext-diff"),
                     "diff": ("--no-textconv", "--no-ext-diff"), "fetch": ("--upload-pack=git-upload-pack",)}


def _inert_args(args: Sequence[str]) -> list[str]:
    """``args`` with the flags that keep ``_SUBCOMMAND_FLAGS``' commands from running the clone's programs."""
    at = 0
    while at < len(args) and args[at].startswith("-"):  # global options before the command: -c KEY=VALUE, ...
        at += 2 if args[at] == "-c" else 1
    if at >= len(args) or args[at] not in _SUBCOMMAND_FLAGS:
        return list(args)
    return [*args[:at + 1], *_SUBCOMMAND_FLAGS[args[at]], *args[at + 1:]]


REPOSITORY_ENV = ("GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_CONFIG", "GIT_CONFIG_PARAMETERS", "GIT_CONFIG_COUNT",
                  "GIT_OBJECT_DIRECTORY", "GIT_DIR", "GIT_WORK_TREE", "GIT_IMPLICIT_WORK_TREE", "GIT_GRAFT_FILE",
                  "GIT_INDEX_FILE", "GIT_NO_REPLACE_OBJECTS", "GIT_REPLACE_REF_BASE", "GIT_PREFIX",
                  "GIT_INTERNAL_SUPER_PREFIX", "GIT_SHALLOW_FILE", "GIT_COMMON_DIR")
"""What ``git rev-parse --local-env-vars`` names (git 2.39): variables that choose the repository, its index or
its objects over ``-C``. A git hook exports some (pre-commit runs hooks with GIT_INDEX_FILE set), and a kit started
from one would read that repository as JAX's history."""


def _quiet_env() -> dict[str, str]:
    # Never ask for a password or open an editor: a bisect is not interactive. The repository is the one -C names.
    env = {name: value for name, value in os.environ.items() if name not in REPOSITORY_ENV}
    return {**env, "GIT_TERMINAL_PROMPT": "0", "GIT_ASKPASS": "true", "SSH_ASKPASS": "true",
            "GIT_EDITOR": "true", "LC_ALL": "C"}


def looks_like_network(error: GitFailed) -> bool:
    """True when git's words say the remote could not be reached (not: a bad ref, a full disk)."""
    words = error.stderr.lower()
    return any(word in words for word in _NETWORK_WORDS)
