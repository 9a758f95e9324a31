"""An audit's test files shared out among pytest processes, one per core, run side by side.

An audit's tests are JAX's own: on 0.11.0 their cases took 116 of the audit's
190 s on one core while the machine's second idled. Each file goes whole to
one process (a file is imported once), the slowest first to the process with
the least to do (longest processing time first), each file's cost being
what its import and cases took in the last audit of this environment (kept
beside it, `kit.known.harvest.kept_tests`), or a guess from how many tests it
holds. Little work stays in one process: each starts Python and JAX again.
Each file is imported on its own (pytest's ``importlib`` mode), as it was
in one process: audits of 0.5.3 and 0.11.0 gave every entry the presence
that one process gave it.
"""

from __future__ import annotations

import json
import math
import os
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Callable, Sequence

from ...atomic_files import atomic_write_text
from ...records import JsonTextError, read_json
from .changed_tests import TestFunction
from .pytest_run import SideRun

GUESS_PER_TEST_S = 0.5
"""A test file never timed here: its cost guessed from the test functions asked of it."""
IMPORT_S = 0.3
"""And what importing it costs."""
SHARE_S = 15.0
"""The least work worth a process of its own: each starts Python, pytest and JAX again (some 3 s)."""

RunOne = Callable[[Sequence[TestFunction], Path], SideRun]


MOST_PROCESSES = 4
"""Each process holds JAX with 8 host devices and XLA's threads (some 700 MB at its peak): a big node's cores are
not all worth a process."""


def cores() -> int:
    """The cores this process may run on (the affinity a cluster's job gives it, where the system says), at most
    `MOST_PROCESSES`."""
    affinity = getattr(os, "sched_getaffinity", None)
    return max(1, min(MOST_PROCESSES, len(affinity(0)) if affinity is not None else (os.cpu_count() or 1)))


def shared_out(tests: Sequence[TestFunction], seconds: dict[str, float], processes: int) -> list[list[TestFunction]]:
    """``tests`` in at most ``processes`` groups, each file whole in one, the groups' costs near even."""
    files: dict[str, list[TestFunction]] = {}
    for test in tests:
        files.setdefault(test.path, []).append(test)

    def cost(path: str) -> float:
        return seconds[path] if path in seconds else IMPORT_S + GUESS_PER_TEST_S * len(files[path])

    worth = math.ceil(sum(cost(path) for path in files) / SHARE_S)
    groups: list[list[TestFunction]] = [[] for _ in range(max(1, min(processes, len(files), worth)))]
    loads = [0.0] * len(groups)
    for path in sorted(files, key=lambda p: (-cost(p), p)):
        least = loads.index(min(loads))
        groups[least].extend(files[path])
        loads[least] += cost(path)
    return [group for group in groups if group]


def run_shared_out(tests: Sequence[TestFunction], own: Path, run_one: RunOne, processes: int,
                   timings: Path | None) -> SideRun:
    """``tests`` run by ``run_one`` (tests, the process's own folder) in groups side by side; one run's outcomes
    and problems, the seconds of the slowest; the files' seconds kept in ``timings`` for the next audit."""
    seconds = _read_seconds(timings)
    groups = shared_out(tests, seconds, processes)
    if len(groups) == 1:
        runs = [run_one(groups[0], own)]
    else:
        with ThreadPoolExecutor(len(groups)) as pool:
            futures = [pool.submit(run_one, group, _own(own, n)) for n, group in enumerate(groups)]
            runs = [future.result() for future in futures]  # a process stopped by Ctrl-C raises here
    whole = SideRun(seconds=max(run.seconds for run in runs),
                    exit_code=next((run.exit_code for run in runs if run.exit_code), runs[0].exit_code),
                    problem=" | ".join(run.problem for run in runs if run.problem))
    for run in runs:
        whole.outcomes.update(run.outcomes)
        whole.file_seconds.update(run.file_seconds)
    if timings is not None and whole.file_seconds:
        atomic_write_text(timings, _json({**seconds, **whole.file_seconds}))
    return whole


def _own(own: Path, n: int) -> Path:
    folder = own / f"process-{n}"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def _read_seconds(timings: Path | None) -> dict[str, float]:
    if timings is None:
        return {}
    try:
        data = read_json(timings)
    except (OSError, JsonTextError):
        return {}  # none yet, or a file another audit left half written: the guesses serve
    return {str(k): float(v) for k, v in data.items() if isinstance(v, (int, float))} if isinstance(data, dict) else {}


def _json(seconds: dict[str, float]) -> str:
    return json.dumps({path: round(s, 2) for path, s in sorted(seconds.items())}, indent=0) + "\n"
