"""A warm interpreter for `jax-kit reduce`: JAX imported once, each candidate program run in a forked child.

``python -m repro.reduce_worker`` imports jax (no backend is started: that happens at a program's first
computation, in the child, after the program has set its own ``XLA_FLAGS``), says ``ready`` on stdout,
then reads one JSON request a line on stdin::

    {"script": "/abs/cand/prog.py", "folder": "/abs/cand", "timeout": 60, "env": {"NAME": "value"}}

and answers each with one JSON line ``{"exit": N | null, "timed_out": bool, "seconds": S}``. The child
runs the script as ``python SCRIPT`` would (`repro.forked`, shared with `repro.known_batch`: ``runpy``
as ``__main__``, ``sys.argv`` its own, in ``folder``), its stdout and stderr in ``folder/stdout.txt`` and
``folder/stderr.txt`` (the file descriptors themselves, so what C++ prints is kept too), and what it
raised in ``folder/raised.json``
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
import sys
import time
from typing import Any, Dict

from repro import forked


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
    folder = request["folder"]
    out = os.open(os.path.join(folder, "stdout.txt"), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    err = os.open(os.path.join(folder, "stderr.txt"), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        pid = forked.spawn(lambda: _child(request["script"], folder, request.get("env") or {}), out, err)
    finally:
        os.close(out)
        os.close(err)
    code = forked.wait(pid, float(request.get("timeout", 60)))
    return {"exit": code, "timed_out": code is None, "seconds": round(time.perf_counter() - started, 3)}


def _child(script: str, folder: str, env: Dict[str, str]) -> int:
    """In the forked child: the candidate as ``python SCRIPT``, in its folder, what it raised written down."""
    os.chdir(folder)
    os.environ.update(env)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    if env.get("KIT_XLA_DUMP_FLAGS"):
        from repro import program_watch
        program_watch.install()

    def raised(error: BaseException) -> None:
        first = next((line.strip() for line in str(error).splitlines() if line.strip()), "")
        with open(os.path.join(folder, "raised.json"), "w", encoding="utf-8") as handle:
            json.dump({"type": type(error).__name__, "text": first[:300]}, handle)

    return forked.as_main(script, raised)


if __name__ == "__main__":
    sys.exit(main())
