"""Candidates judged: each run on both releases (side by side, ``--jobs``), never twice (cached by its text);
and the result run again as a user runs it, ``python FILE`` in each release's environment.

`Tester` is `kit.reduce.search`'s judge. A variant `passes.plausible` refuses never runs. The bad
release runs first: where it does not show the problem the good one is not asked. Every run is counted.
"""

from __future__ import annotations

import os
import re
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from ..install import Environment
from ..run import child_processes
import kit.triage.block_outcome as block_outcome  # the foundation's reader of outcomes (tests/test_layers.py)
from . import passes
from .problem import Problem
from .program import Program
from .runs import Seen, run_candidate
from .workers import Pool


@dataclass
class Counts:
    tried: int = 0
    """Variants judged (cached ones included)."""
    run: int = 0
    """Variants run (on the bad release at least)."""
    runs: int = 0
    """Program runs, both releases counted."""
    refused: int = 0
    """Variants refused without a run (`passes.plausible`)."""
    cached: int = 0
    seconds_running: float = 0.0
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False)


@dataclass
class Sides:
    """What the runs need besides the program: the releases (bad, good), the program's file name, the folder
    candidates are written in, the time limit, and whether explain's dump is read (``--op``)."""

    bad: str
    good: str
    name: str
    scratch: Path
    timeout: int
    dump: bool


class Tester:
    def __init__(self, problem: Problem | None, pool: Pool, sides: Sides, jobs: int) -> None:
        self.problem = problem
        self.pool = pool
        self.sides = sides
        self.jobs = max(1, jobs)
        self.cache: dict[str, bool] = {}
        self.counts = Counts()
        self.last: dict[str, tuple[Seen, Seen]] = {}

    def run_both(self, program: Program) -> tuple[Seen, Seen]:
        """``program`` on the bad release and the good one, side by side."""
        with ThreadPoolExecutor(max_workers=2) as pool:
            bad = pool.submit(self._run, self.sides.bad, program)
            good = pool.submit(self._run, self.sides.good, program)
            return bad.result(), good.result()

    def _run(self, release: str, program: Program) -> Seen:
        started = time.monotonic()
        seen = run_candidate(self.pool, release, program, self.sides.name, self.sides.scratch, self.sides.timeout,
                             self.sides.dump)
        with self.counts.lock:
            self.counts.runs += 1
            self.counts.seconds_running += time.monotonic() - started
        return seen

    def __call__(self, batch: list[Program], likely: bool = False) -> int | None:
        """The index of the first program of ``batch`` that keeps the problem (None: none does). ``likely``: the
        first is probably kept, so each is judged alone with both releases side by side (the fastest answer);
        else ``jobs`` at a time, the good release asked only where the bad one shows the problem (the fewest runs)."""
        if likely:
            for at, program in enumerate(batch):
                if self.keeps(program, together=True):
                    return at
            return None
        for start in range(0, len(batch), self.jobs):
            group = batch[start:start + self.jobs]
            if len(group) == 1:
                verdicts = [self.keeps(group[0])]
            else:
                with ThreadPoolExecutor(max_workers=len(group)) as pool:
                    verdicts = list(pool.map(self.keeps, group))
            for at, kept in enumerate(verdicts):
                if kept:
                    return start + at
        return None

    def keeps(self, program: Program, together: bool = False) -> bool:
        digest = program.digest
        with self.counts.lock:
            self.counts.tried += 1
            if digest in self.cache:
                self.counts.cached += 1
                return self.cache[digest]
        kept = self._judged(program, together)
        with self.counts.lock:
            self.cache[digest] = kept
        return kept

    def _judged(self, program: Program, together: bool) -> bool:
        assert self.problem is not None
        if not passes.plausible(program, self.sides.dump):
            with self.counts.lock:
                self.counts.refused += 1
            return False
        with self.counts.lock:
            self.counts.run += 1
        lines = program.marked_lines()
        if together:
            bad, good = self.run_both(program)
        else:
            bad = self._run(self.sides.bad, program)
            if not self.problem.shown_on_bad(bad, lines):
                return False
            good = self._run(self.sides.good, program)
        kept = self.problem.holds(bad, good, lines)
        if kept and self.problem.repeats > 1:  # one pair of runs could be noise that happened to differ
            more = [self.run_both(program) for _ in range(self.problem.repeats - 1)]
            kept = self.problem.holds_over([bad] + [b for b, _ in more], [good] + [g for _, g in more], lines)
        if kept:
            self.last[program.digest] = (bad, good)
        return kept


_RAISED_LINE = re.compile(r"^(?P<type>[A-Za-z_][\w.]*(?:Error|Exception|Warning|Interrupt|Exit|[A-Z]\w*)): ?(?P<text>.*)$")


def plain_run(env: Environment, release: str, file: Path, timeout: int) -> Seen:
    """``python FILE`` in the release's environment, as a user runs it: nothing of the kit on its path, no
    variable of the kit's, in the file's folder; its stdout and stderr kept apart."""
    # A name of its own: the same release may run the file twice at once (a problem judged over several runs).
    handle, name = tempfile.mkstemp(prefix=f".{file.name}.{release}.", suffix=".stderr", dir=file.parent)
    os.close(handle)
    stderr = Path(name)
    plain = {name: os.environ[name] for name in ("PATH", "HOME", "LANG", "LC_ALL", "TMPDIR", "USER")
             if name in os.environ}
    started = time.monotonic()
    ended = child_processes.run(["/bin/sh", "-c", 'exec "$0" "$1" 2>"$2"', str(env.python), file.name, str(stderr)],
                                plain, timeout, cwd=file.parent, echo=None)
    seconds = time.monotonic() - started
    try:
        errors = stderr.read_text(encoding="utf-8", errors="replace")
    finally:
        stderr.unlink(missing_ok=True)
    printed = "\n".join(ended.tail)
    code = ended.code if ended.code is not None else -9
    outcome = block_outcome.outcome(code, printed)
    outcome["exception"] = raised_from_traceback(errors) if code != 0 else None
    return Seen(release, outcome, printed, errors, seconds, ended.code is None)


def raised_from_traceback(stderr: str) -> block_outcome.BlockException | None:
    """The exception a traceback ends with (its class without the module, the message's first line)."""
    lines = stderr.splitlines()
    start = max((i for i, line in enumerate(lines) if line.startswith("Traceback (most recent call last)")),
                default=None)
    if start is None:
        return None
    for line in lines[start + 1:]:
        found = _RAISED_LINE.match(line)
        if found and not line.startswith(" "):
            kind, text = found.group("type").rsplit(".", 1)[-1], found.group("text").strip()
            return {"type": kind, "message": block_outcome.masked(text)[0], "text": text[:300]}
    return None


ENVIRONMENT_INFO = "import jax; jax.print_environment_info()"


def environment_info(env: Environment, devices: int | None = None, timeout: int = 120) -> str:
    """What ``jax.print_environment_info()`` prints in the release's environment (JAX's bug template asks for it),
    with the host device count the reproducer sets where it sets one (its device info then says what it ran on)."""
    plain = {name: os.environ[name] for name in ("PATH", "HOME", "LANG", "TMPDIR") if name in os.environ}
    if devices is not None:
        plain["XLA_FLAGS"] = f"--xla_force_host_platform_device_count={devices}"
    ended = child_processes.run([str(env.python), "-c", ENVIRONMENT_INFO], plain, timeout, echo=None)
    return "\n".join(ended.tail).rstrip()
