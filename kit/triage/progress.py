"""Lines that say a triage's run is still going: a block that never ends was silent until its timeout (1800 s).

Triage keeps a run's output off the console (``-v`` shows it), so without
these a user saw nothing for half an hour and could not tell a slow
environment build from a hung block, nor that ``--timeout`` exists.
"""

from __future__ import annotations

import threading
import time
from contextlib import contextmanager
from typing import Iterator

from ..log_events import Log

EVERY_S = 60.0
"""How often a run still going says so."""


@contextmanager
def still_running(log: Log, what: str, timeout_s: int, every_s: float | None = None) -> Iterator[None]:
    """Around one run: every ``every_s`` (`EVERY_S`) a line that ``what`` is still running, and until when."""
    every = EVERY_S if every_s is None else every_s
    stop = threading.Event()
    started = time.monotonic()

    def tick() -> None:
        while not stop.wait(every):
            log(f"{what}: still running after {time.monotonic() - started:.0f} s (stopped at {timeout_s} s; "
                "--timeout SECONDS sets another limit)")

    thread = threading.Thread(target=tick, name="triage-progress", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()
