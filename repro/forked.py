"""A program run in a fork of a warm interpreter, as ``python SCRIPT`` would run it, and waited for.

Shared by the warm interpreters that import JAX once and fork for each program: `repro.known_batch` (the
catalogue's checks) and `repro.reduce_worker` (`jax-kit reduce`'s candidates). One way to fork, to run a
script as ``__main__``, to say its exit status, and to kill it with what it started when it runs too long
or its caller is stopped.

Standard library only; runs on every release the kit supports (Python 3.9 on).
"""

from __future__ import annotations

import gc
import io
import os
import runpy
import select
import signal
import sys
import time
import traceback
from typing import Callable, Optional

CHILD_FAILED = 70
"""The exit status of a child whose body itself failed before it could say one (EX_SOFTWARE)."""


def spawn(body: Callable[[], int], stdout_fd: int, stderr_fd: int) -> int:
    """``body()`` in a forked child in a process group of its own, its output on the two descriptors; the child's pid.
    The child ends with ``body``'s return value as its exit status, never returning here."""
    flush()
    gc.freeze()  # the child's collector leaves the parent's objects alone: their pages stay shared, not copied
    pid = os.fork()
    if pid == 0:  # the child: never returns
        code = CHILD_FAILED
        try:
            os.setpgid(0, 0)  # its own group: a timeout kills what it started too
            os.dup2(stdout_fd, 1)
            os.dup2(stderr_fd, 2)
            streams_on_descriptors()
            code = body()
        finally:
            os._exit(code)
    return pid


def streams_on_descriptors() -> None:
    """sys.stdout and sys.stderr writing to descriptors 1 and 2, as in ``python SCRIPT`` (a caller may have put
    other objects there, as pytest does), in the interpreter's own encoding."""
    for number, name in ((1, "stdout"), (2, "stderr")):
        stream = getattr(sys, name)
        try:
            if stream.fileno() == number:
                continue
        except (AttributeError, OSError, ValueError):
            pass
        original = getattr(sys, f"__{name}__", None)
        setattr(sys, name, io.TextIOWrapper(io.FileIO(number, "w", closefd=False),
                                            encoding=getattr(original, "encoding", None) or "utf-8",
                                            errors=getattr(original, "errors", None) or "strict",
                                            line_buffering=True))


def wait(pid: int, timeout_s: float) -> Optional[int]:
    """The child's exit status as the OS reports it (negative: the signal that ended it); None where it ran past
    ``timeout_s`` (then it and its group are killed). Ctrl-C or SIGTERM of the caller kills it too."""
    deadline = time.monotonic() + timeout_s
    pidfd = _pidfd(pid)
    try:
        delay = 0.001
        while True:
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                return os.waitstatus_to_exitcode(status)
            left = deadline - time.monotonic()
            if left <= 0:
                kill_group(pid)
                return None
            if pidfd is not None:
                select.select([pidfd], [], [], left)
            else:
                time.sleep(min(delay, left))
                delay = min(delay * 2, 0.05)
    except BaseException:  # the caller stopped: the child goes with it
        kill_group(pid)
        raise
    finally:
        if pidfd is not None:
            os.close(pidfd)


def _pidfd(pid: int) -> Optional[int]:
    try:
        return os.pidfd_open(pid)  # type: ignore[attr-defined,no-any-return]  # Linux 5.3+, Python 3.9+
    except (AttributeError, OSError):
        return None


def kill_group(pid: int) -> None:
    """The child and its process group killed, and reaped."""
    for target in (lambda: os.killpg(pid, signal.SIGKILL), lambda: os.kill(pid, signal.SIGKILL)):
        try:
            target()
        except OSError:
            pass
    try:
        os.waitpid(pid, 0)
    except ChildProcessError:
        pass


def as_main(script: str, raised: Callable[[BaseException], None] = lambda _error: None) -> int:
    """In the child: run ``script`` as ``python SCRIPT`` runs it, and end as that interpreter would end;
    ``raised`` is told the exception the script ended with, if any."""
    sys.argv = [script]
    sys.path[0] = os.path.dirname(os.path.realpath(script))
    try:
        runpy.run_path(script, run_name="__main__")
        code = 0
    except SystemExit as stop:
        code = exit_code(stop.code)
    except KeyboardInterrupt as stop:
        print_uncaught(stop, script)
        raised(stop)
        flush()
        # As Python itself ends on an uncaught KeyboardInterrupt: killed by SIGINT, so the caller sees the signal.
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGINT)
        code = 130
    except BaseException as error:  # noqa: BLE001 (what `python SCRIPT` prints, and its exit status)
        print_uncaught(error, script)
        raised(error)
        code = 1
    flush()
    return code & 0xFF


def print_uncaught(error: BaseException, script: str) -> None:
    """The traceback Python prints, from the script's own frame on (runpy's frames are not the script's)."""
    tb = error.__traceback__
    while tb is not None and os.path.realpath(tb.tb_frame.f_code.co_filename) != os.path.realpath(script):
        tb = tb.tb_next
    traceback.print_exception(type(error), error, tb)


def flush() -> None:
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass


def exit_code(code: object) -> int:
    """The exit status ``python SCRIPT`` gives for what ``sys.exit`` was called with."""
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    print(code, file=sys.stderr)  # sys.exit("message") prints it and exits 1
    return 1
