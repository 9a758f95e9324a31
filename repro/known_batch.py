"""Run several catalogue checks in one interpreter: JAX imported once, each check as its own ``__main__``.

``python -m repro.known_batch --out RESULTS.json SCRIPT...`` imports jax, then
runs each script as ``python SCRIPT`` would (``runpy``, ``sys.argv`` its own,
its output captured), and records its exit code as the script protocol reads
it: ``sys.exit(n)`` is n, an uncaught exception 1, running off the end 0. The
results file is rewritten after every check, so a check that kills the
interpreter leaves the ones before it answered, and the kit runs the rest
alone. Standard library only; runs on every release the kit supports.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import runpy
import sys
import time
import traceback
from typing import Any, Dict, List

TAIL_LINES = 15


def run_one(script: str) -> Dict[str, Any]:
    """One script as its own program; its exit code, the last lines it printed and its seconds."""
    output = io.StringIO()
    started = time.perf_counter()
    saved_argv = sys.argv
    sys.argv = [script]
    try:
        with contextlib.redirect_stdout(output), contextlib.redirect_stderr(output):
            try:
                runpy.run_path(script, run_name="__main__")
                code = 0
            except SystemExit as stop:
                code = exit_code(stop.code)
            except BaseException:  # what `python SCRIPT` would print, and its exit status
                traceback.print_exc(file=output)
                code = 1
    finally:
        sys.argv = saved_argv
    return {"script": script, "exit": code, "tail": output.getvalue().splitlines()[-TAIL_LINES:],
            "seconds": round(time.perf_counter() - started, 3)}


def exit_code(code: object) -> int:
    """The exit status ``python SCRIPT`` gives for what ``sys.exit`` was called with (shared with
    `repro.reduce_worker`)."""
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    print(code, file=sys.stderr)  # sys.exit("message") prints it and exits 1
    return 1


def main(argv: List[str]) -> int:
    out = argv[argv.index("--out") + 1]
    scripts = [a for i, a in enumerate(argv) if a != "--out" and (i == 0 or argv[i - 1] != "--out")]
    results: List[Dict[str, Any]] = []
    try:
        import jax  # noqa: F401  (once, for every check: what the batch saves)
    except BaseException as exc:  # JAX itself cannot run: every check says so
        _write(out, {"jax_error": f"{type(exc).__name__}: {exc}", "results": results})
        return 0
    for script in scripts:
        results.append(run_one(script))
        _write(out, {"results": results})
    return 0


def _write(path: str, data: Dict[str, Any]) -> None:
    temp = f"{path}.part"
    with open(temp, "w", encoding="utf-8") as handle:
        json.dump(data, handle)
    os.replace(temp, path)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
