"""A sweep's progress lines: ``[4/5] scaling · jax 0.6.2 (1 more after it, 1m04s elapsed, ETA 40s)``."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable

# An ETA from one or two cells is mostly noise (the first cell of a release
# also pays for its install), so it is shown once this many cells have run.
ETA_AFTER = 3


@dataclass
class Progress:
    """``[4/5] scaling · jax 0.6.2 (1 more after it, 1m04s elapsed, ETA 40s)``."""

    total: int
    clock: Callable[[], float] = time.monotonic
    durations: list[float] = field(default_factory=list)
    started: float | None = None

    def starting(self, what: str) -> str:
        now = self.clock()
        if self.started is None:
            self.started = now
        position = len(self.durations) + 1
        line = (f"[{position}/{self.total}] {what} ({self.total - position} more after it, "
                f"{clock_text(now - self.started)} elapsed")
        if len(self.durations) >= ETA_AFTER:
            # Mean of the cells so far: installs make the first cell of each
            # release slower, and the mean spreads that over what is left.
            mean = sum(self.durations) / len(self.durations)
            line += f", ETA {clock_text(mean * (self.total - position + 1))}"
        return line + ")"

    def finished(self, seconds: float) -> None:
        self.durations.append(seconds)


def clock_text(seconds: float) -> str:
    """``45s``, ``1m04s``, ``2h03m``."""
    seconds = int(round(seconds))
    if seconds < 60:
        return f"{seconds}s"
    minutes, seconds = divmod(seconds, 60)
    if minutes < 60:
        return f"{minutes}m{seconds:02d}s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes:02d}m"
