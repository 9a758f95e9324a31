"""Run several catalogue checks from one warm interpreter: JAX imported once, each check in a fresh fork of it.

``python -m repro.known_batch --out RESULTS.json [--timeouts S,S,...] SCRIPT...``
imports jax, then runs each script in a child forked from that interpreter, as
``python SCRIPT`` would run it (`repro.forked`, shared with `repro.reduce_worker`:
``runpy``, ``__main__``, ``sys.argv`` and ``sys.path[0]`` its own, its output
captured at the file descriptors), and
records its exit status exactly as the operating system reports that child's:
``sys.exit(n)`` is ``n & 255``, an uncaught exception 1, running off the end 0, a
KeyboardInterrupt the death by SIGINT that Python gives (negative: a signal).

Each check starts from the state the import left, never from another check's:
a check that patches a ``jnp`` function, sets a config flag or starts threads
changes its own copy only. JAX's backend is not started in the parent (forking
a started XLA client would deadlock its threads); each child starts its own.
A check past its own timeout is killed with what it started (its process
group) and recorded as timed out, so it is not run again. Before the first
check, one child starts JAX's backend and runs the first ops every check runs:
if JAX cannot start here (``JAX_PLATFORMS`` naming a platform this machine
lacks, a broken jaxlib), no check's failure would be a verdict, and the batch
says so and runs none; else the modules those ops imported are imported once
in the parent, with tracing and MLIR's dialects warmed (never the backend).

Two checks run side by side (each fork pays its own first compiles, which a
shared interpreter paid once); a check that reads the clock runs with nothing
beside it. The results file is rewritten after every check, so a batch killed
from outside leaves the ones before answered, and the kit runs the rest alone.
Standard library only; runs on every release the kit supports (Python 3.9+).
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import time
from typing import Any, Dict, List, Optional

from repro import forked

TAIL_LINES = 15
DEFAULT_TIMEOUT_S = 600.0


def run_one(script: str, timeout_s: float = DEFAULT_TIMEOUT_S) -> Dict[str, Any]:
    """One script as its own program in a fork of this interpreter; its exit status, last lines and seconds.

    ``exit`` is None when it ran past ``timeout_s`` (it was killed then)."""
    started = time.perf_counter()
    with tempfile.TemporaryFile() as output:
        code = _forked(lambda: forked.as_main(script), output, timeout_s)
        output.seek(0)
        said = output.read().decode("utf-8", "replace").splitlines()[-TAIL_LINES:]
    result = {"script": script, "exit": code, "tail": said, "seconds": round(time.perf_counter() - started, 3)}
    if code is None:
        result["timed_out"] = True
    return result


def first_child() -> "tuple[str, List[str]]":
    """Start JAX's backend in a child, as a check would, and run the first ops every check runs: why it could not
    ("" when it could), and the modules those ops imported (for the parent to import once, for every check)."""
    with tempfile.TemporaryFile() as output:
        code = _forked(_first_ops, output, DEFAULT_TIMEOUT_S)
        output.seek(0)
        said = [line for line in output.read().decode("utf-8", "replace").splitlines() if line.strip()]
    if code == 0:
        return "", [line[len(_MODULE):] for line in said if line.startswith(_MODULE)]
    last = next((line for line in reversed(said) if not line.startswith(_MODULE)), "")
    return (last if code == 3 and last else f"exit status {code}: {last}"), []


_MODULE = "kit-batch-module "


def _first_ops() -> int:
    before = set(sys.modules)
    try:
        import jax
        import jax.numpy as jnp

        int((jnp.arange(3) + 1).sum())  # what the kit asks after a failure (kit/run/jax_runs.SMOKE)
    except BaseException as exc:  # noqa: BLE001 (whatever it is, JAX did not start)
        print(f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}".strip())
        return 3
    try:  # what most checks do next: their imports are the parent's to make once
        jax.block_until_ready(jax.jit(jax.grad(lambda x: jnp.sum(jnp.sin(x) * x)))(jnp.ones(2)))
        jax.block_until_ready(jnp.linalg.inv(jnp.eye(2)))
    except Exception:  # noqa: BLE001 (a release without one of these: fewer modules warmed, nothing else)
        pass
    for name in sorted(set(sys.modules) - before):
        print(f"{_MODULE}{name}")
    return 0


def _forked(body: Any, output: Any, timeout_s: float) -> Optional[int]:
    """``body()`` in a child with its stdout and stderr on ``output``; its exit status as the OS reports it
    (negative: the signal that ended it), None if it ran past ``timeout_s`` (then it and its group are killed)."""
    return forked.wait(_spawn(body, output), timeout_s)


def _spawn(body: Any, output: Any) -> int:
    """``body()`` in a forked child, its output on ``output``; the child's pid."""
    return forked.spawn(body, output.fileno(), output.fileno())


def main(argv: List[str]) -> int:
    out, timeouts, scripts = _arguments(argv)
    results: List[Dict[str, Any]] = []
    try:
        import jax  # noqa: F401  (once, for every check: what the batch saves)
    except BaseException as exc:  # noqa: BLE001 (JAX itself cannot run: every check says so)
        _write(out, {"jax_error": f"{type(exc).__name__}: {exc}", "results": results})
        return 0
    problem, modules = first_child()
    if problem:  # no failure here would be a verdict: the kit is told why, and no check runs
        _write(out, {"jax_error": f"JAX cannot start its backend here ({problem})", "results": results})
        return 0
    if "--cold" not in argv and not _warmed(jax, modules):  # a backend started: a fork would not survive it
        os.execv(sys.executable, [sys.executable, "-m", "repro.known_batch", "--cold", *argv])
    _run_all(out, scripts, timeouts, results)
    return 0


def _warmed(jax: Any, modules: List[str]) -> bool:
    """Warm what every check's first op pays for and no backend needs: the modules JAX imports on its first ops
    (``first_child`` lists them), tracing, and MLIR's dialects (about half a second a check on this 2-core machine,
    which a shared interpreter paid once). A cache, not a change a check can see. False where a backend started
    after all (the batch is then started again without the warm-up, never forked with it)."""
    for name in modules:
        try:
            __import__(name)
        except Exception:  # noqa: BLE001 (one that imports only after a backend: the checks import it themselves)
            pass
    try:
        import jax.numpy as jnp

        jax.make_jaxpr(lambda x: (x + 1).sum())(jax.ShapeDtypeStruct((3,), jnp.float32))
        from jax._src.interpreters import mlir

        _first_op(mlir)
    except Exception:  # noqa: BLE001 (a release without these: its checks pay it themselves)
        pass
    return not _backend_started()


def _first_op(mlir: Any) -> None:
    """One StableHLO op built in an MLIR context, as every lowering builds them: the dialect's first op costs
    a quarter of a second on this machine, once per process."""
    import numpy as np
    from jax._src.lib.mlir import ir
    from jax._src.lib.mlir.dialects import hlo

    with mlir.make_ir_context(), ir.Location.unknown():
        module = ir.Module.create()
        with ir.InsertionPoint(module.body):
            hlo.ConstantOp(ir.DenseElementsAttr.get(np.zeros(2, np.float32)))


def _backend_started() -> bool:
    try:
        from jax._src import xla_bridge

        return bool(getattr(xla_bridge, "_backends", {}))
    except Exception:  # noqa: BLE001
        return False


JOBS = 2
"""Checks run side by side, each in its own fork (at most the machine's processors): each pays its own first
compiles, which a shared interpreter paid once, and two at a time win that back on a machine of two cores or more.
A check that reads the clock runs with nothing beside it (`reads_the_clock`)."""


def reads_the_clock(script: str) -> bool:
    """A check that times something (its verdict a ratio of timings): run alone, so no sibling shares its CPU."""
    try:
        with open(script, encoding="utf-8", errors="replace") as handle:
            text = handle.read()
    except OSError:
        return True
    return any(word in text for word in ("perf_counter", "time.time", "monotonic", "timeit", "process_time"))


def _run_all(out: str, scripts: List[str], timeouts: List[float], results: List[Dict[str, Any]]) -> None:
    """Every script, up to `JOBS` at once (a clock-reading one alone), the results file rewritten after each."""
    jobs = max(1, min(JOBS, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else JOBS))
    waiting = list(zip(scripts, timeouts))
    running: Dict[int, Dict[str, Any]] = {}
    try:
        while waiting or running:
            while waiting and len(running) < jobs and not any(r["alone"] for r in running.values()):
                script, timeout_s = waiting[0]
                alone = reads_the_clock(script)
                if alone and running:
                    break  # it waits for the others to end
                waiting.pop(0)
                output = tempfile.TemporaryFile()
                pid = _spawn(lambda script=script: forked.as_main(script), output)
                running[pid] = {"script": script, "output": output, "started": time.perf_counter(),
                                "deadline": time.monotonic() + timeout_s, "alone": alone}
            pid, code = _next_ended(running)
            job = running.pop(pid)
            job["output"].seek(0)
            said = job["output"].read().decode("utf-8", "replace").splitlines()[-TAIL_LINES:]
            job["output"].close()
            result = {"script": job["script"], "exit": code, "tail": said,
                      "seconds": round(time.perf_counter() - job["started"], 3)}
            if code is None:
                result["timed_out"] = True
            results.append(result)
            _write(out, {"results": results})
    finally:
        for pid in list(running):  # Ctrl-C or SIGTERM of the batch: its checks go with it
            forked.kill_group(pid)


def _next_ended(running: Dict[int, Dict[str, Any]]) -> "tuple[int, Optional[int]]":
    """The first of ``running`` to end (its exit status), or to pass its deadline (killed, None)."""
    delay = 0.001
    while True:
        for pid in running:
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                return pid, os.waitstatus_to_exitcode(status)
        now = time.monotonic()
        late = next((pid for pid, job in running.items() if job["deadline"] <= now), None)
        if late is not None:
            forked.kill_group(late)
            return late, None
        time.sleep(delay)
        delay = min(delay * 2, 0.02)


def _arguments(argv: List[str]) -> "tuple[str, List[float], List[str]]":
    taken = {"--out": "", "--timeouts": ""}
    scripts: List[str] = []
    rest = iter(argv)
    for arg in rest:
        if arg == "--cold":
            continue
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
