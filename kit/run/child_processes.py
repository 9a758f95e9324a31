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

How the tree is found and ended is kit/run/process_tree.py.
"""

from __future__ import annotations

import os
import selectors
import subprocess
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Mapping, Sequence

from ..errors import out_of_files
from ..package_files import PACKAGE_ROOT, repro_root
from .child_output import Echo, Lines, Tail, echo_to_console
from .process_tree import REAP_S, SUBREAPER, die_with_the_kit, end_abandoned, end_trees, new_token, tagged_env

CHUNK_BYTES = 64 * 1024
POLL_S = 0.05

DRAIN_S = 2.0
"""Once the tree is gone, how long reading waits for the pipe's end before it stops anyway.

The pipe ends as soon as its last writer is gone; only a process the kit
could not find (one that left the session and cleared its environment) keeps
it open, and then the output it would still write is not the check's."""

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
        self.token = new_token()
        env = tagged_env(env, self.token)
        SUBREAPER.acquire()
        try:
            # stdin from /dev/null: a check runs unattended (a sweep, a SLURM task) and must not wait for a key.
            # If the kit is killed outright, the kernel kills the check's process too (die_with_the_kit).
            self.proc = subprocess.Popen(list(cmd), cwd=cwd, env=env, stdin=subprocess.DEVNULL,
                                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True,
                                         preexec_fn=die_with_the_kit())
        except BaseException as exc:
            SUBREAPER.release()
            fault = out_of_files(exc)  # no descriptor for its pipes: the check never started, no verdict on it
            if fault is not None:
                raise fault from None
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
        SUBREAPER.release()

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
                    self._feed(chunk)
        except (OSError, ValueError):
            pass  # the pipe was closed under us: the output is over either way
        finally:
            self._lines.close()

    def _feed(self, chunk: bytes) -> None:
        """Hand a chunk on; whatever fails downstream (a console closed, a full log) must not stop the reading:
        a child whose pipe is no longer drained blocks on its next write and hangs to its timeout."""
        try:
            self._lines.feed(chunk)
        except Exception:  # noqa: BLE001 - the chunk is lost; the pipe is still read
            pass

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


_SWEPT: list[bool] = []
_SWEEPING = threading.Lock()


def end_abandoned_trees(log: Callable[[str], None]) -> list[str]:
    """End what kits killed outright (``kill -9``) left running, and say so; asked once per kit, before its first
    check. Each as ``pid N (name)``.

    Their checks' own processes died with them (`process_tree.die_with_the_kit`);
    what those had started, re-parented to init, is found by its kit's dead pid
    (`process_tree.end_abandoned`).
    """
    with _SWEEPING:
        if _SWEPT:
            return []
        _SWEPT.append(True)
    left = end_abandoned()
    if left:
        log(f"ended {len(left)} process{'' if len(left) == 1 else 'es'} that a kit killed earlier (kill -9) had left "
            f"running: {', '.join(left[:10])}")
    return left


REPO_ROOT = PACKAGE_ROOT  # the kit's own files, read (a built-in check's source); children get `repro_root()`


def dropped_variables(isolating: Mapping[str, str]) -> list[str]:
    """What a run's log says of the caller's variables that `repro_env` (and ``isolating``, an environment's
    `isolating_env`) keep from a check, one sentence each: none when the caller set none of them."""
    said = []
    # The repository root is put there anyway (`python -m kit` is often started with it): not the caller's own.
    callers = [entry for entry in os.environ.get("PYTHONPATH", "").split(os.pathsep)
               if entry and Path(entry).resolve() != REPO_ROOT]
    if "PYTHONPATH" in isolating and callers:
        said.append("PYTHONPATH is set here: the release's environment runs without it, so the release's own jax "
                    "and packages are the ones imported (an interpreter given with --python keeps it)")
    if os.environ.get("PYTHONOPTIMIZE"):
        said.append("PYTHONOPTIMIZE is set here: checks run without it, since a check's asserts decide its verdict")
    return said


def with_site(extra_env: Mapping[str, str] | None, site: Mapping[str, str]) -> dict[str, str]:
    """``extra_env`` with a kit site folder's variables (``site``, its PYTHONPATH one folder) put before the path
    the run would have had: the environment's own (a kit-built one's is empty) or, for a user's interpreter as it
    is, the caller's. Replacing it lost a --python whose JAX is found through PYTHONPATH (on the TPU machine
    this workplace lends, 2026-12-05: "ModuleNotFoundError: No module named 'jax'")."""
    extra = dict(extra_env or {})
    before = extra.get("PYTHONPATH", os.environ.get("PYTHONPATH", ""))
    return {**extra, **site, "PYTHONPATH": os.pathsep.join(p for p in (site["PYTHONPATH"], before) if p)}


def repro_env(extra_env: Mapping[str, str] | None = None, pythonpath: tuple[Path, ...] = ()) -> dict[str, str]:
    """A repro's environment: ours, with the environment's extra paths and ``repro`` importable (the checkout,
    or an installed kit's copy of it: `kit.package_files.repro_root`), output unbuffered, and asserts kept."""
    env = {**os.environ, **(extra_env or {})}
    # A check's asserts are its verdict: under PYTHONOPTIMIZE they vanish and an affected release reads unaffected.
    env.pop("PYTHONOPTIMIZE", None)
    # An empty entry (PYTHONPATH unset, or ending in ':') would put the working folder on sys.path.
    inherited = [entry for entry in env.get("PYTHONPATH", "").split(os.pathsep) if entry]
    env["PYTHONPATH"] = os.pathsep.join([*(str(path) for path in pythonpath), str(repro_root()), *inherited])
    env["PYTHONUNBUFFERED"] = "1"
    # The kit reads a child's output as UTF-8: under LC_ALL=C (PYTHONUTF8=0) a child's print of one non-ASCII
    # character died of UnicodeEncodeError, a crash recorded against the release.
    env.setdefault("PYTHONIOENCODING", "utf-8")
    return env
