"""A warm interpreter for `jax-kit reduce`: JAX imported once, each candidate program run in a forked child.

``python -m repro.reduce_worker`` imports jax (no backend is started: that happens at a program's first
computation, in the child, after the program has set its own ``XLA_FLAGS``), says ``ready`` on stdout,
then reads one JSON request a line on stdin::

    {"script": "/abs/cand/prog.py", "folder": "/abs/cand", "timeout": 60, "env": {"NAME": "value"}}

and answers each with one JSON line ``{"exit": N | null, "timed_out": bool, "seconds": S}``. The child
runs the script as ``python SCRIPT`` would (``runpy`` as ``__main__``, ``sys.argv`` its own, in
``folder``), its stdout and stderr in ``folder/stdout.txt`` and ``folder/stderr.txt`` (the file
descriptors themselves, so what C++ prints is kept too), and what it raised in ``folder/raised.json``
(``{"type", "text"}``: the class and the first line of its message). A child that outlives ``timeout``
is killed with its process group. With ``KIT_XLA_DUMP_FLAGS`` among the request's variables, the
child arms `repro.program_watch` as an explained run does: XLA's dump flags kept in any XLA_FLAGS the
program assigns. With ``KIT_COMPILE_CACHE`` set for the worker, JAX's persistent compilation cache is on
(`repro.compile_cache`): most candidates compile what the one before compiled.

Forking after ``import jax`` is safe where the import starts no thread that holds a lock: the kit checks
it once per release (the first candidate's run is compared with a plain ``python SCRIPT``, docs/reduce.md).
Standard library only; runs on every release the kit supports.
"""

from __future__ import annotations

import json
import os
import runpy
import signal
import sys
import time
import traceback
from typing import Any, Dict, Optional

from repro.known_batch import exit_code


def main() -> int:
    started = time.perf_counter()
    try:
        import jax  # once, for every candidate: what the worker saves
        if os.environ.get("KIT_COMPILE_CACHE"):  # the candidates' compiles kept for the next (repro.compile_cache)
            from repro import compile_cache
            compile_cache.enable(jax)
    except BaseException as exc:  # JAX itself cannot import: every request says so
        _say({"ready": False, "error": f"{type(exc).__name__}: {exc}"[:500]})
        return 1
    _say({"ready": True, "import_s": round(time.perf_counter() - started, 3)})
    for line in sys.stdin:
        if not line.strip():
            continue
        request = json.loads(line)
        _say(_run(request))
    return 0


def _say(answer: Dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(answer) + "\n")
    sys.stdout.flush()


def _run(request: Dict[str, Any]) -> Dict[str, Any]:
    started = time.perf_counter()
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:  # the child: never returns
        try:
            os.setsid()
            _child(request["script"], request["folder"], request.get("env") or {})
        finally:
            os._exit(70)
    deadline = started + float(request.get("timeout", 60))
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            code: Optional[int] = os.waitstatus_to_exitcode(status) if hasattr(os, "waitstatus_to_exitcode") \
                else (os.WEXITSTATUS(status) if os.WIFEXITED(status) else -os.WTERMSIG(status))
            return {"exit": code, "timed_out": False, "seconds": round(time.perf_counter() - started, 3)}
        if time.perf_counter() > deadline:
            _kill_group(pid)
            os.waitpid(pid, 0)
            return {"exit": None, "timed_out": True, "seconds": round(time.perf_counter() - started, 3)}
        time.sleep(0.01)


def _kill_group(pid: int) -> None:
    for kill in (lambda: os.killpg(pid, signal.SIGKILL), lambda: os.kill(pid, signal.SIGKILL)):
        try:
            kill()
        except OSError:
            pass


def _child(script: str, folder: str, env: Dict[str, str]) -> None:
    os.chdir(folder)
    os.environ.update(env)
    out = os.open(os.path.join(folder, "stdout.txt"), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    err = os.open(os.path.join(folder, "stderr.txt"), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.dup2(out, 1)
    os.dup2(err, 2)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    if env.get("KIT_XLA_DUMP_FLAGS"):
        from repro import program_watch
        program_watch.install()
    sys.argv = [script]
    sys.path[0] = os.path.dirname(script)
    code = 0
    try:
        runpy.run_path(script, run_name="__main__")
    except SystemExit as stop:
        code = exit_code(stop.code)
    except BaseException as raised:  # what `python SCRIPT` prints, and its exit status
        traceback.print_exc()
        first = next((line.strip() for line in str(raised).splitlines() if line.strip()), "")
        with open(os.path.join(folder, "raised.json"), "w", encoding="utf-8") as handle:
            json.dump({"type": type(raised).__name__, "text": first[:300]}, handle)
        code = 1
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    finally:
        os._exit(code)


if __name__ == "__main__":
    sys.exit(main())
