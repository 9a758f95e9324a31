"""Process state for the tests that start processes: still running, ended in time, the pids a child wrote.

Shared by the process-tree, child-process and multi-process suites (a test module imports no other).
"""

from __future__ import annotations

import time
from pathlib import Path


def running(pid: int) -> bool:
    """True while ``pid`` is a process that has not ended (a zombie has ended: only its exit status is left)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat[stat.rfind(")") + 2] != "Z"


def ended_soon(pid: int, within: float = 10.0) -> bool:
    """Whether ``pid`` ends within ``within`` seconds: SIGKILL is delivered asynchronously, and on a loaded machine
    a killed process can show as running for a moment after the kill returns."""
    deadline = time.monotonic() + within
    while running(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    return not running(pid)


def pids_written(path: Path, count: int = 1, within: float = 30.0) -> list[int]:
    """The pids a child writes into ``path`` once ``count`` are there (Python can take seconds to start on a
    loaded machine); AssertionError after ``within`` seconds."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        pids = path.read_text().split() if path.exists() else []
        if len(pids) >= count:
            return [int(pid) for pid in pids]
        time.sleep(0.05)
    raise AssertionError(f"{path} never named {count} pid(s) within {within} s")
