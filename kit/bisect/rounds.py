"""Rounds of probes: one at a time, K side by side on this machine, or K SLURM jobs at once.

The pure search asks for outcomes in rounds (`search.ksect`, `search.probe_round`);
this module answers each round and remembers it, so the report can say how
many rounds the search waited for and what ran together. ``--jobs K`` here
runs K probes in threads (each probe's own processes do the work): on a
machine with few cores that helps while probes wait on downloads and
installs, and hurts timing-sensitive checks, which the log says once.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Callable, Mapping, Sequence

from ..log_events import Log
from .search import ProbeOutcome

ProbeOne = Callable[[str], ProbeOutcome]
ProbeMany = Callable[[Sequence[str]], Mapping[str, ProbeOutcome]]


class Rounds:
    """Answers the search's probes, one or a batch at a time, and keeps each round's candidates."""

    def __init__(self, one: ProbeOne, many: ProbeMany | None = None) -> None:
        self._one = one
        self._many = many
        self.rounds: list[list[str]] = []

    def one(self, candidate: str) -> ProbeOutcome:
        """A round of one (the plain bisection, the bounds of a sequential search)."""
        self.rounds.append([candidate])
        return self._one(candidate)

    def many(self, batch: Sequence[str]) -> Mapping[str, ProbeOutcome]:
        """A round of several at once (one at a time when no parallel prober was given)."""
        self.rounds.append(list(batch))
        if self._many is None:
            return {candidate: self._one(candidate) for candidate in batch}
        return self._many(batch)  # a round of one is still a SLURM job under --slurm


def side_by_side(probe: ProbeOne, jobs: int, log: Log) -> ProbeMany:
    """Up to ``jobs`` probes at once on this machine, each in a thread of its own."""
    log(f"--jobs {jobs} on this machine: {jobs} probes side by side, each building (or reusing) its environment "
        "and running its script. That pays while builds wait on downloads (a 2-core machine with a slow index); "
        "probes that need the cores, and any timing, compete with each other. --slurm runs them as cluster jobs.")

    def many(batch: Sequence[str]) -> Mapping[str, ProbeOutcome]:
        with ThreadPoolExecutor(max_workers=jobs, thread_name_prefix="probe") as pool:
            return dict(zip(batch, pool.map(probe, batch)))

    return many
