"""Resolving ahead: the installs the next rounds may need, resolved while the current probe runs.

A bisect knows its candidates from the index's metadata in under a second,
long before it probes them; resolving a release against the index takes
seconds to tens of seconds of waiting on the network (`kit.install.resolutions`).
So the releases the search is likely to reach are resolved here, a few at a
time on background threads, in the order the search would reach them; a
probe that asks for one of them gets the answer (or waits for the one still
being asked) instead of asking the index itself. Nothing is installed here.

An answer that fails here (the index out of reach, say) is not kept: the
probe that needs that release asks again and says so itself, so a network
fault is still exit 4 and nothing is recorded.
"""

from __future__ import annotations

import os
import queue
import threading
from typing import Sequence

from ..log_events import Log
from ..config import Matrix
from .index import PackageIndex
from .key import InstallKey
from .release import resolve_release


WORKERS = 2
"""Resolutions asked at once: uv calls side by side contend for its cache (see `plan.choose_python`), and the
probe running beside them needs the cores."""


class Prefetch:
    """Background resolutions of ``(version, key)`` in order; `close` drops what has not started."""

    def __init__(self, matrix: Matrix, index: PackageIndex, log: Log | None = None,
                 workers: int = WORKERS) -> None:
        self.matrix = matrix
        self.index = index
        self.log = log or (lambda message: None)
        self.workers = max(1, min(workers, os.cpu_count() or 1))
        self.resolved: list[str] = []
        """The releases resolved ahead, in the order they finished (for the tests and the curious)."""
        self._todo: queue.Queue[tuple[str, InstallKey] | None] = queue.Queue()
        self._threads: list[threading.Thread] = []

    def start(self, wanted: Sequence[tuple[str, InstallKey]]) -> None:
        for item in wanted:
            self._todo.put(item)
        for _ in range(min(self.workers, len(wanted))):
            # Daemon threads: a bisect stopped by Ctrl-C does not wait for a resolution nobody needs.
            thread = threading.Thread(target=self._work, name="kit-prefetch", daemon=True)
            thread.start()
            self._threads.append(thread)

    def close(self, wait: bool = True) -> None:
        """Drop the resolutions not started and (``wait``) wait for those under way, at most one uv call per
        worker, so no thread and no uv process outlives the search that wanted them. Not on Ctrl-C or an
        error: the kit is leaving, and the daemon threads go with it."""
        while True:
            try:
                self._todo.get_nowait()
            except queue.Empty:
                break
        for _ in self._threads:
            self._todo.put(None)
        for thread in self._threads if wait else ():
            thread.join()

    def _work(self) -> None:
        while True:
            item = self._todo.get()
            if item is None:
                return
            version, key = item
            try:
                resolve_release(self.matrix, version, key, self.index)
            except Exception:  # said by the probe that needs it, if one does: see the module's docstring
                continue
            self.resolved.append(version)
