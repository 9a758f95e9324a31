"""A check's process tree: how it is marked, found and ended, whatever its processes did to leave it.

The kit starts each check's process as a session leader and marks it (and so
everything it starts, which inherits the environment) with
``KIT_PROCESS_TREE=<token>``. To end the tree, on Linux, it reads ``/proc``:
the root's process group and session, every process whose environment carries
the token (``/proc/PID/environ``: this finds those that called setsid or
double-forked), and all their descendants; SIGTERM first when asked, SIGKILL
in every case, in rounds until none is left. While a tree runs the kit is a
child subreaper (``prctl(PR_SET_CHILD_SUBREAPER)``), so orphans re-parent to
the kit instead of to init: they stay findable by parent, and the kit reaps
them once killed (no zombies left). A kit killed outright unwinds none of this:
its check's process dies with it (PR_SET_PDEATHSIG, `die_with_the_kit`), and
the next kit ends the rest, found by the dead kit's pid in their tokens
(`end_abandoned`).

Elsewhere (no ``/proc``, no ``prctl``: macOS, the BSDs) only the process group
is killed: a process that calls setsid escapes there. A process that both
leaves the session and clears its environment escapes on Linux too; that is
deliberate evasion, not a check's stray helper.
"""

from __future__ import annotations

import ctypes
import os
import secrets
import signal
import sys
import threading
import time
from pathlib import Path
from typing import Callable, Mapping, NamedTuple, Sequence

TREE_ENV = "KIT_PROCESS_TREE"
"""Tokens of every kit-started tree a process belongs to, ``:``-separated (a kit inside a check adds its own)."""

POLL_S = 0.05

KILL_ROUNDS = 50
"""SIGKILL rounds over the tree: a process forking while it is killed gets new children in between."""

REAP_S = 5.0

_PR_SET_CHILD_SUBREAPER = 36
_PR_SET_PDEATHSIG = 1


def new_token() -> str:
    """A tree's mark: this kit's pid and pid namespace, then random hex, so a later run can tell a dead kit's trees
    (`end_abandoned`)."""
    return f"{os.getpid()}-{_pid_namespace()}-{secrets.token_hex(8)}"


def _pid_namespace() -> str:
    """The pid namespace's inode (a pid means something only inside one: a container's kit names its own); 0 unknown."""
    try:
        return os.readlink("/proc/self/ns/pid").strip("pid:[]") or "0"
    except OSError:
        return "0"


def tagged_env(env: Mapping[str, str], token: str) -> dict[str, str]:
    """``env`` with ``token`` added to ``KIT_PROCESS_TREE``: what marks a new tree's every process."""
    marked = dict(env)
    marked[TREE_ENV] = ":".join(part for part in (marked.get(TREE_ENV), token) if part)
    return marked


class _Proc(NamedTuple):
    ppid: int
    pgrp: int
    session: int
    state: str
    name: str


def end_trees(trees: Sequence[tuple[int, str]], grace_s: float = 0.0) -> list[list[str]]:
    """Kill each ``(root, token)`` tree (root: a session leader the kit started); reap what re-parented to the kit.

    Returns, per tree, the processes other than its root that were still
    running, as ``pid N (name)``. With ``grace_s``, SIGTERM first and up to
    that long to exit (srun passes SIGTERM on to its tasks); SIGKILL in every
    case after, even when a second Ctrl-C cuts the polite wait short.
    """
    table = _proc_table()
    found = [_living(_tree(table, root, token)) for root, token in trees]
    leftovers = [[f"pid {pid} ({proc.name})" for pid, proc in sorted(living.items()) if pid != root]
                 for (root, _), living in zip(trees, found)]
    try:
        if grace_s > 0:
            for (root, _), living in zip(trees, found):
                _signal(root, living, signal.SIGTERM)
            deadline = time.monotonic() + grace_s
            while time.monotonic() < deadline and _living_in(trees):
                time.sleep(POLL_S)
    finally:
        _kill_all(trees)
    return leftovers


def _living_in(trees: Sequence[tuple[int, str]]) -> bool:
    table = _proc_table()
    if table is None:  # no /proc: whether a group still has members, only killpg(0) can tell
        return any(_group_alive(root) for root, _ in trees)
    return any(_living(_tree(table, root, token)) for root, token in trees)


def _group_alive(root: int) -> bool:
    try:
        os.killpg(root, 0)
    except (ProcessLookupError, PermissionError):
        return False
    return True


def _kill_all(trees: Sequence[tuple[int, str]]) -> None:
    ended: set[int] = set()
    for _ in range(KILL_ROUNDS):
        table = _proc_table()
        living_any = False
        for root, token in trees:
            tree = _tree(table, root, token)
            ended.update(tree)  # zombies too: those re-parented to the kit are the kit's to reap
            living = _living(tree)
            _signal(root, living, signal.SIGKILL)
            living_any = living_any or bool(living)
        if not living_any:
            break
        time.sleep(0.01)
    _reap(ended - {root for root, _ in trees})  # a root is its Popen's to reap


def _signal(root: int, pids: Mapping[int, _Proc], sig: int) -> None:
    # Each process gets the signal once: the group's members through killpg, the rest one by one. A
    # second SIGTERM can land while a handler's clean exit is finalising Python (handlers are reset to
    # the default there), and kill the process it was meant to let exit.
    try:
        os.killpg(root, sig)
        grouped = True
    except (ProcessLookupError, PermissionError):
        grouped = False
    for pid, proc in pids.items():
        if grouped and proc.pgrp == root:
            continue
        try:
            os.kill(pid, sig)
        except (ProcessLookupError, PermissionError):
            pass


def _reap(pids: set[int]) -> None:
    """Wait for the killed processes that re-parented to the kit (a subreaper must, or they stay zombies)."""
    me = os.getpid()
    deadline = time.monotonic() + REAP_S
    waiting = set(pids)
    while waiting and time.monotonic() < deadline:
        table = _proc_table() or {}
        for pid in list(waiting):
            proc = table.get(pid)
            if proc is None or proc.ppid != me:
                waiting.discard(pid)  # gone, or another parent (init) reaps it
                continue
            try:
                if os.waitpid(pid, os.WNOHANG)[0] == pid:
                    waiting.discard(pid)
            except ChildProcessError:
                waiting.discard(pid)
        if waiting:
            time.sleep(0.01)


def _living(tree: Mapping[int, _Proc]) -> dict[int, _Proc]:
    return {pid: proc for pid, proc in tree.items() if proc.state != "Z"}


def _tree(table: Mapping[int, _Proc] | None, root: int, token: str) -> dict[int, _Proc]:
    """The processes of ``root``'s tree (zombies too): its group, its session, its tag, and their descendants."""
    if table is None:
        return {}  # no /proc: the process group is all that can be reached
    me = os.getpid()
    spared = _ancestors(me, table)  # the kit itself, and whatever started it, are never the check's
    children: dict[int, list[int]] = {}
    for pid, proc in table.items():
        children.setdefault(proc.ppid, []).append(pid)
    stack = [pid for pid, proc in table.items()
             if pid == root or proc.pgrp == root or proc.session == root or _tagged(pid, token)]
    found: dict[int, _Proc] = {}
    while stack:
        pid = stack.pop()
        if pid in found or pid in spared or pid not in table:
            continue
        found[pid] = table[pid]
        stack.extend(children.get(pid, ()))
    return found


def _ancestors(pid: int, table: Mapping[int, _Proc]) -> set[int]:
    chain = {pid}
    while pid in table and table[pid].ppid not in chain and table[pid].ppid > 0:
        pid = table[pid].ppid
        chain.add(pid)
    return chain


def _proc_table() -> dict[int, _Proc] | None:
    """Every process's parent, group, session, state and name, from /proc; None without /proc."""
    if sys.platform != "linux":
        return None  # other systems' /proc, where there is one, reads differently
    try:
        names = os.listdir("/proc")
    except OSError:
        return None
    table: dict[int, _Proc] = {}
    for name in names:
        if not name.isdigit():
            continue
        try:
            stat = Path(f"/proc/{name}/stat").read_bytes().decode("utf-8", "replace")
        except OSError:
            continue  # it ended while we looked
        # "pid (comm) state ppid pgrp session ...": comm may hold spaces and parentheses.
        comm_end = stat.rfind(")")
        fields = stat[comm_end + 2:].split()
        if len(fields) < 4:
            continue
        table[int(name)] = _Proc(int(fields[1]), int(fields[2]), int(fields[3]), fields[0],
                                 stat[stat.find("(") + 1:comm_end])
    return table


def _tagged(pid: int, token: str) -> bool:
    try:
        environ = Path(f"/proc/{pid}/environ").read_bytes()
    except OSError:
        return False  # another user's process, or gone
    prefix = TREE_ENV.encode() + b"="
    for entry in environ.split(b"\0"):
        if entry.startswith(prefix):
            return token.encode() in entry[len(prefix):].split(b":")
    return False


class Subreaper:
    """The kit as a child subreaper while any tree it started runs (Linux; a no-op elsewhere).

    Only while a tree runs: daemons the kit's other commands start (a local
    SLURM's slurmctld, say) should re-parent to init as usual, not to the kit.
    """

    def __init__(self) -> None:
        self._count = 0
        self._lock = threading.Lock()

    def acquire(self) -> None:
        with self._lock:
            if self._count == 0:
                _set_subreaper(True)
            self._count += 1

    def release(self) -> None:
        with self._lock:
            self._count = max(self._count - 1, 0)
            if self._count == 0:
                _set_subreaper(False)


def _set_subreaper(on: bool) -> bool:
    """prctl(PR_SET_CHILD_SUBREAPER); False where there is no such call (the tag and the group still work)."""
    if sys.platform != "linux":
        return False
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return int(libc.prctl(_PR_SET_CHILD_SUBREAPER, int(on), 0, 0, 0)) == 0
    except (OSError, AttributeError):
        return False


SUBREAPER = Subreaper()
"""The one per process: several trees (``--processes N``) share it."""


def die_with_the_kit() -> Callable[[], None] | None:
    """A ``preexec_fn`` that has the kernel SIGKILL the check's process when the kit dies (Linux's PDEATHSIG).

    A kit killed outright (``kill -9``, the OOM killer) unwinds nothing: without
    it the check ran on, an orphan with no timeout. Only the process started
    gets it (what it forks does not inherit it): `end_abandoned` ends the rest
    at the next run. None where there is no such call.
    """
    if sys.platform != "linux":
        return None
    try:
        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None
    kit = os.getpid()

    def arm() -> None:  # runs in the child between fork and exec: nothing but two system calls
        prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        if os.getppid() != kit:  # the kit died before the call: no signal will come
            os._exit(128 + signal.SIGKILL)

    return arm


def end_abandoned() -> list[str]:
    """Kill what is left of the trees of kits that died without ending them; each as ``pid N (name)``.

    A process is a dead kit's when a token in its ``KIT_PROCESS_TREE`` names
    a kit pid that no longer runs (`new_token`); one whose kit pid runs
    (that kit, or a process that reused its pid) is left alone, as are this
    kit and its ancestors. Only this user's processes can be read, so only
    those are ended.
    """
    table = _proc_table()
    if table is None:
        return []
    spared = _ancestors(os.getpid(), table)
    namespace = _pid_namespace()
    dead: dict[int, bool] = {}
    abandoned: list[tuple[int, str]] = []
    for pid, proc in table.items():
        if pid in spared or proc.state == "Z" or namespace == "0":
            continue
        for token in _tokens(pid):
            kit, _, rest = token.partition("-")
            # An older kit's token (hex alone) names no kit; another namespace's pid is not one of ours.
            if not kit.isdigit() or rest.split("-", 1)[0] != namespace:
                continue
            if dead.setdefault(int(kit), int(kit) not in table or table[int(kit)].state == "Z"):
                abandoned.append((pid, token))
                break
    if not abandoned:
        return []
    found = [f"pid {pid} ({table[pid].name})" for pid, _ in sorted(abandoned)]
    _kill_all(abandoned)
    return found


def _tokens(pid: int) -> list[str]:
    try:
        environ = Path(f"/proc/{pid}/environ").read_bytes()
    except OSError:
        return []  # another user's process, or gone
    prefix = TREE_ENV.encode() + b"="
    for entry in environ.split(b"\0"):
        if entry.startswith(prefix):
            return [part.decode("ascii", "replace") for part in entry[len(prefix):].split(b":") if part]
    return []
