"""Child processes the kit starts: each in its own session, its output read in bounded chunks, its whole tree ended.

Every check the kit runs (a repro, a user's script, the N processes of
``--processes N``, a bisect's script) starts here, so three promises hold for
all of them:

* **The whole tree ends**: at the timeout, at Ctrl-C or SIGTERM (``cli``
  turns SIGTERM into SystemExit, which unwinds through here), and as soon as
  the child itself exits, whatever it forked, put in a new session (setsid) or
  left holding its stdout. A forked ``sleep 120`` must not keep a 60 s check
  alive for 120 s, nor outlive the session.
* **Reading never waits on a pipe a grandchild still holds**: the pipe is
  read in chunks by a thread that stops when told, once the tree is gone or a
  short drain has passed.
* **What is echoed and kept is bounded** (``kit/run/child_output.py``).

How the tree is found, on Linux: the child leads its own session
(``start_new_session``), so its process group and session reach what stays in
them; every process started under it inherits ``KIT_PROCESS_TREE=<token>`` in
its environment, so ``/proc/*/environ`` finds those that left (setsid, a
double fork); and while a tree runs the kit is a child subreaper
(``prctl(PR_SET_CHILD_SUBREAPER)``), so orphans re-parent to the kit instead of
to init: they stay its descendants, and the kit reaps them once killed (no
zombies left). The child's own exit is awaited without reaping it
(``waitid(WNOWAIT)``), so its pid, which names its group and session, cannot be
reused until the tree is gone.

Elsewhere (no ``/proc``, no ``prctl``: macOS, the BSDs) only the process group
is killed: a child that calls setsid escapes there. A process that both
leaves the session and clears its environment escapes on Linux too; that is
deliberate evasion, not a check's stray helper.
"""

from __future__ import annotations

import ctypes
import os
import secrets
import selectors
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping, NamedTuple, Sequence

from .child_output import Echo, Lines, Tail, echo_to_console

TREE_ENV = "KIT_PROCESS_TREE"
"""Tokens of every kit-started tree a process belongs to, ``:``-separated (a kit inside a check adds its own)."""

CHUNK_BYTES = 64 * 1024
POLL_S = 0.05

DRAIN_S = 2.0
"""Once the tree is gone, how long reading waits for the pipe's end before it stops anyway.

The pipe ends as soon as its last writer is gone; only a process the kit
could not find (one that left the session and cleared its environment) keeps
it open, and then the output it would still write is not the check's."""

KILL_ROUNDS = 50
"""SIGKILL rounds over the tree: a process forking while it is killed gets new children in between."""

REAP_S = 5.0

_PR_SET_CHILD_SUBREAPER = 36


@dataclass
class Ended:
    """How one child ended, and what it left."""

    code: int | None
    """Its exit code (negative: killed by that signal); None when it ran past its timeout."""
    tail: list[str] = field(default_factory=list)
    """The last lines of its output, bounded (``child_output``)."""
    leftovers: list[str] = field(default_factory=list)
    """Processes of its tree still running when it ended (``pid 412 (sleep)``); killed then."""

    @property
    def timed_out(self) -> bool:
        return self.code is None


def run(cmd: Sequence[str], env: Mapping[str, str], timeout: float, cwd: Path | None = None,
        echo: Echo | None = echo_to_console, tail: Tail | None = None) -> Ended:
    """Run ``cmd`` to its end or its timeout, echoing its output; then end its whole tree."""
    tail = tail if tail is not None else Tail()
    child = Child(cmd, env, cwd, tail, echo=echo)
    deadline = time.monotonic() + timeout
    timed_out = False
    try:
        while not child.exited():
            if time.monotonic() >= deadline:
                timed_out = True
                break
            time.sleep(POLL_S)
    finally:  # also on Ctrl-C and SIGTERM: nothing of the check outlives the kit
        leftovers = child.end()
    return Ended(None if timed_out else child.returncode, tail.lines(), leftovers)


class Child:
    """One command in its own session, its output pumped into bounded lines by a thread."""

    def __init__(self, cmd: Sequence[str], env: Mapping[str, str], cwd: Path | None, tail: Tail,
                 prefix: str = "", echo: Echo | None = echo_to_console) -> None:
        self.token = secrets.token_hex(8)
        env = dict(env)
        env[TREE_ENV] = ":".join(part for part in (env.get(TREE_ENV), self.token) if part)
        _SUBREAPER.acquire()
        try:
            # stdin from /dev/null: a check runs unattended (a sweep, a SLURM task) and must not wait for a key.
            self.proc = subprocess.Popen(list(cmd), cwd=cwd, env=env, stdin=subprocess.DEVNULL,
                                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True)
        except BaseException:
            _SUBREAPER.release()
            raise
        self._lines = Lines(tail, prefix, echo)
        self._stop = threading.Event()
        self._reader = threading.Thread(target=self._pump, daemon=True)
        self._reader.start()
        self._leftovers: list[str] | None = None

    @property
    def pid(self) -> int:
        return self.proc.pid

    @property
    def returncode(self) -> int | None:
        return self.proc.returncode

    def status(self) -> int | None:
        """Its exit code once it has exited (negative: the signal), None while it runs.

        Read without reaping it: until the tree is ended its pid must keep
        naming its process group and session, or another process could get it.
        """
        if self.proc.returncode is not None:
            return self.proc.returncode
        if not hasattr(os, "waitid"):  # pragma: no cover - not Linux: reap, and rely on the process group
            return self.proc.poll()
        try:
            info = os.waitid(os.P_PID, self.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
        except ChildProcessError:
            return self.proc.poll()
        if info is None:
            return None
        return info.si_status if info.si_code == os.CLD_EXITED else -info.si_status

    def exited(self) -> bool:
        return self.status() is not None

    def end(self, grace_s: float = 0.0) -> list[str]:
        """End the child and its whole tree (SIGTERM first when ``grace_s``), finish reading; the leftovers."""
        return end_all([self], grace_s)[0]

    def _after_end(self, leftovers: list[str]) -> None:
        """Reap the child, finish reading its pipe, and let the kit stop being a subreaper when it is the last."""
        self._leftovers = leftovers
        try:
            self.proc.wait(timeout=REAP_S)
        except subprocess.TimeoutExpired:  # pragma: no cover - stuck in the kernel (D state): nothing more to do
            pass
        self._finish_reading()
        _SUBREAPER.release()

    def _pump(self) -> None:
        assert self.proc.stdout is not None
        fd = self.proc.stdout.fileno()
        try:
            with selectors.DefaultSelector() as selector:
                selector.register(fd, selectors.EVENT_READ)
                while not self._stop.is_set():
                    if not selector.select(POLL_S):
                        continue
                    chunk = os.read(fd, CHUNK_BYTES)
                    if not chunk:
                        break
                    self._lines.feed(chunk)
        except (OSError, ValueError):
            pass  # the pipe was closed under us: the output is over either way
        finally:
            self._lines.close()

    def _finish_reading(self) -> None:
        self._reader.join(timeout=DRAIN_S)
        self._stop.set()  # a writer outside the tree still holds the pipe: stop reading anyway
        self._reader.join()
        if self.proc.stdout is not None:
            self.proc.stdout.close()


def end_all(children: Sequence[Child], grace_s: float = 0.0) -> list[list[str]]:
    """End several children's trees together (one grace for all); each one's leftovers."""
    todo = [child for child in children if child._leftovers is None]
    leftovers: list[list[str]] = [[] for _ in todo]
    try:
        leftovers = end_trees([(child.pid, child.token) for child in todo], grace_s)
    finally:
        for child, left in zip(todo, leftovers):
            child._after_end(left)
    return [child._leftovers or [] for child in children]


# --------------------------------------------------------------------------
# The tree


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
    try:
        os.killpg(root, sig)
    except (ProcessLookupError, PermissionError):
        pass
    for pid in pids:
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


class _Subreaper:
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


_SUBREAPER = _Subreaper()
