"""Following a job array: each task's state as it changes, and each task as it leaves the queue.

The matrix and bisect wait for their arrays the same way; what they say when
a task lands (a record, a probe's observation) is theirs, passed in as
``landed``.
"""

from __future__ import annotations

import time
from typing import Callable

from ..log_events import Log
from .jobs import POLL_S, SQUEUE_FAILURES, queued_states

_LANDED = "LANDED"


def follow(job_id: str, count: int, name: Callable[[int], str], log: Log, *,
           landed: Callable[[int, float], None] | None = None, stopped_tip: str = "", poll_s: float = POLL_S) -> bool:
    """Say ``name(task): state`` (and the node) as each task's state changes, and call ``landed(task, seconds
    since the first poll)`` once for each task squeue no longer lists, until it lists none of the job.

    False when squeue failed `SQUEUE_FAILURES` times in a row: the waiting
    stops (said, with ``stopped_tip``), not the job, whose tasks may still run.
    """
    seen: dict[int, str] = {}
    started = time.monotonic()
    failures = 0
    while True:
        states = queued_states(job_id)
        failures = 0 if states is not None else failures + 1
        if failures >= SQUEUE_FAILURES:
            log(f"squeue has failed {failures} times in a row; stopped waiting for job {job_id}"
                + (f": {stopped_tip}" if stopped_tip else ""))
            return False
        for task, (state, node) in sorted((states or {}).items()):
            if seen.get(task) != state and task < count:
                seen[task] = state
                log(f"{name(task)}: {state.lower()}" + (f" on {node}" if node else ""))
        for task in range(count):
            if states is not None and task not in states and seen.get(task) != _LANDED:
                seen[task] = _LANDED
                if landed is not None:
                    landed(task, time.monotonic() - started)
        if states == {}:
            return True
        time.sleep(poll_s)
