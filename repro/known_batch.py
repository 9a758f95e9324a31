"""Run several catalogue checks from one warm interpreter: JAX imported once, each check in a fresh fork of it.

``python -m repro.known_batch --out RESULTS.json [--timeouts S,S,...] SCRIPT...``
imports jax, then runs each script in a child forked from that interpreter, as
``python SCRIPT`` would run it (``runpy``, ``__main__``, ``sys.argv`` and
``sys.path[0]`` its own, its output captured at the file descriptors), and
records its exit status exactly as the operating system reports that child's:
``sys.exit(n)`` is ``n & 255``, an uncaught exception 1, running off the end 0, a
KeyboardInterrupt the death by SIGINT that Python gives (negative: a signal).

Each check starts from the state the import left, never from another check's:
a check that patches a ``jnp`` function, sets a config flag or starts threads
changes its own copy only. JAX's backend is not started in the parent (forking
a started XLA client would deadlock its threads); each child starts its own.
A check past its own timeout is killed with what it started (its process
group) and recorded as timed out, so it is not run again. When a check fails,
one child asks once whether JAX can start its backend here at all: if it
cannot (``JAX_PLATFORMS`` naming a platform this machine lacks, a broken
jaxlib), no check's failure is a verdict, and the batch says so and stops.

The results file is rewritten after every check, so a batch killed from
outside leaves the ones before answered, and the kit runs the rest alone.
Standard library only; runs on every release the kit supports (Python 3.9+).
"""

from __future__ import annotations

import io
import json
import os
import runpy
import select
import signal
import sys
import tempfile
import time
import traceback
from typing import Any, Dict, List, Optional

TAIL_LINES = 15
DEFAULT_TIMEOUT_S = 600.0


def run_one(script: str, timeout_s: float = DEFAULT_TIMEOUT_S) -> Dict[str, Any]:
    """One script as its own program in a fork of this interpreter; its exit status, last lines and seconds.

    ``exit`` is None when it ran past ``timeout_s`` (it was killed then)."""
    started = time.perf_counter()
    with tempfile.TemporaryFile() as output:
        code = _forked(lambda: _as_main(script), output, timeout_s)
        output.seek(0)
        said = output.read().decode("utf-8", "replace").splitlines()[-TAIL_LINES:]
    result = {"script": script, "exit": code, "tail": said, "seconds": round(time.perf_counter() - started, 3)}
    if code is None:
        result["timed_out"] = True
    return result


def backend_problem() -> str:
    """Why JAX cannot start its backend here ("" when it can): asked in a child, as a check would start it."""
    with tempfile.TemporaryFile() as output:
        code = _forked(_start_backend, output, DEFAULT_TIMEOUT_S)
        output.seek(0)
        said = [line for line in output.read().decode("utf-8", "replace").splitlines() if line.strip()]
    if code == 0:
        return ""
    last = said[-1] if said else ""
    return last if code == 3 and last else f"exit status {code}: {last}"


def _start_backend() -> int:
    try:
        import jax.numpy as jnp

        int((jnp.arange(3) + 1).sum())  # what the kit asks after a failure (kit/run/jax_runs.SMOKE)
    except BaseException as exc:  # noqa: BLE001 (whatever it is, JAX did not start)
        print(f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}".strip())
        return 3
    return 0


def _forked(body: Any, output: Any, timeout_s: float) -> Optional[int]:
    """``body()`` in a child with its stdout and stderr on ``output``; its exit status as the OS reports it
    (negative: the signal that ended it), None if it ran past ``timeout_s`` (then it and its group are killed)."""
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:  # the child: never returns
        code = 70
        try:
            os.setpgid(0, 0)  # its own group: a timeout kills what it started too
            os.dup2(output.fileno(), 1)
            os.dup2(output.fileno(), 2)
            _streams_on_descriptors()
            code = body()
        finally:
            os._exit(code)
    return _wait(pid, timeout_s)


def _streams_on_descriptors() -> None:
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


def _wait(pid: int, timeout_s: float) -> Optional[int]:
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
                _kill_group(pid)
                return None
            if pidfd is not None:
                select.select([pidfd], [], [], left)
            else:
                time.sleep(min(delay, left))
                delay = min(delay * 2, 0.05)
    except BaseException:  # Ctrl-C or SIGTERM of the batch: the check goes with it
        _kill_group(pid)
        raise
    finally:
        if pidfd is not None:
            os.close(pidfd)


def _pidfd(pid: int) -> Optional[int]:
    try:
        return os.pidfd_open(pid)  # type: ignore[attr-defined,no-any-return]  # Linux 5.3+, Python 3.9+
    except (AttributeError, OSError):
        return None


def _kill_group(pid: int) -> None:
    for target in (lambda: os.killpg(pid, signal.SIGKILL), lambda: os.kill(pid, signal.SIGKILL)):
        try:
            target()
        except OSError:
            pass
    try:
        os.waitpid(pid, 0)
    except ChildProcessError:
        pass


def _as_main(script: str) -> int:
    """In the child: run ``script`` as ``python SCRIPT`` runs it, and end as that interpreter would end."""
    sys.argv = [script]
    sys.path[0] = os.path.dirname(os.path.realpath(script))
    try:
        runpy.run_path(script, run_name="__main__")
        code = 0
    except SystemExit as stop:
        code = _exit_code(stop.code)
    except KeyboardInterrupt as stop:
        _print_uncaught(stop, script)
        _flush()
        # As Python itself ends on an uncaught KeyboardInterrupt: killed by SIGINT, so the caller sees the signal.
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGINT)
        code = 130
    except BaseException as error:  # noqa: BLE001 (what `python SCRIPT` prints, and its exit status)
        _print_uncaught(error, script)
        code = 1
    _flush()
    return code & 0xFF


def _print_uncaught(error: BaseException, script: str) -> None:
    """The traceback Python prints, from the script's own frame on (runpy's frames are not the script's)."""
    tb = error.__traceback__
    while tb is not None and os.path.realpath(tb.tb_frame.f_code.co_filename) != os.path.realpath(script):
        tb = tb.tb_next
    traceback.print_exception(type(error), error, tb)


def _flush() -> None:
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass


def _exit_code(code: object) -> int:
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    print(code, file=sys.stderr)  # sys.exit("message") prints it and exits 1
    return 1


def main(argv: List[str]) -> int:
    out, timeouts, scripts = _arguments(argv)
    results: List[Dict[str, Any]] = []
    try:
        import jax  # noqa: F401  (once, for every check: what the batch saves)
    except BaseException as exc:  # noqa: BLE001 (JAX itself cannot run: every check says so)
        _write(out, {"jax_error": f"{type(exc).__name__}: {exc}", "results": results})
        return 0
    asked = False
    for script, timeout_s in zip(scripts, timeouts):
        result = run_one(script, timeout_s)
        if result["exit"] not in (0, 125) and not asked:
            asked = True
            problem = backend_problem()
            if problem:  # no failure here is a verdict: the kit is told why, and nothing more runs
                _write(out, {"jax_error": f"JAX cannot start its backend here ({problem})", "results": results})
                return 0
        results.append(result)
        _write(out, {"results": results})
    return 0


def _arguments(argv: List[str]) -> "tuple[str, List[float], List[str]]":
    taken = {"--out": "", "--timeouts": ""}
    scripts: List[str] = []
    rest = iter(argv)
    for arg in rest:
        if arg in taken:
            taken[arg] = next(rest)
        else:
            scripts.append(arg)
    given = [float(t) for t in taken["--timeouts"].split(",") if t.strip()]
    timeouts = given if len(given) == len(scripts) else [DEFAULT_TIMEOUT_S] * len(scripts)
    return taken["--out"], timeouts, scripts


def _write(path: str, data: Dict[str, Any]) -> None:
    temp = f"{path}.part"
    with open(temp, "w", encoding="utf-8") as handle:
        json.dump(data, handle)
    os.replace(temp, path)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
