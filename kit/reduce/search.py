"""The reduction loop: the passes, coarse first, each variant judged, until no pass makes the program smaller.

Statements first (compound statements unwrapped, calls inlined, each statement list cut by ddmin,
variables inlined), then expressions (``grad`` dropped, random draws as ones, calls by an argument),
then statements again; integers last, while time is left. A variant is judged by ``judge`` (`Tester`:
a batch of variants, the index of the first that keeps the problem), which never runs one twice. The
best program so far is kept on `Reducer.best` as it improves, so a stop (Ctrl-C, the time limit) keeps it.
"""

from __future__ import annotations

import time
from typing import Callable, Iterable, Iterator

from .ddmin import ddmin
from . import passes
from .program import Program

Judge = Callable[[list[Program]], "int | None"]
"""A batch of variants in order -> the index of the first that still shows the problem (None: none does)."""


class OutOfTime(Exception):
    """The time limit passed: the best program so far is the answer."""


class Reducer:
    def __init__(self, start: Program, judge: Judge, deadline: float | None = None,
                 progress: Callable[[Program], None] = lambda _p: None) -> None:
        self.best = start
        self.judge = judge
        self.deadline = deadline
        self.progress = progress
        self.accepted = {start.text}

    def reduce(self) -> Program:
        """The smallest program the passes reach (the best so far where time runs out)."""
        try:
            self._statements()
            before = None
            while before != self.best.text:
                before = self.best.text
                self._greedy(lambda p: passes.simpler_expressions(p, passes.numpy_name(p), integers=False))
                self._statements()
            self._greedy(lambda p: passes.simpler_expressions(p, passes.numpy_name(p), integers=True))
            self._statements()
        except OutOfTime:
            pass
        return self.best

    def _statements(self) -> None:
        before = None
        while before != self.best.text:
            before = self.best.text
            self._greedy(passes.unwrapped)
            self._greedy(passes.inlined_calls)
            self._bodies()
            self._greedy(passes.inlined_variables)

    def _accept(self, program: Program) -> None:
        self.best = program
        self.accepted.add(program.text)
        self.progress(program)

    def _check_time(self) -> None:
        if self.deadline is not None and time.monotonic() > self.deadline:
            raise OutOfTime()

    def _greedy(self, variants: Callable[[Program], Iterable[Program]]) -> None:
        """Take the first variant that keeps the problem, again and again, until none does."""
        while True:
            self._check_time()
            found = self._first(variants(self.best))
            if found is None:
                return
            self._accept(found)

    def _first(self, variants: Iterable[Program], batch: int = 8) -> Program | None:
        """The first of ``variants`` that keeps the problem, judged a batch at a time (the judge runs a batch's
        variants side by side, and stops at the first kept)."""
        pending: list[Program] = []
        for variant in _new(variants, self.accepted):
            pending.append(variant)
            if len(pending) == batch:
                kept = self.judge(pending)
                if kept is not None:
                    return pending[kept]
                pending = []
                self._check_time()
        kept = self.judge(pending) if pending else None
        return pending[kept] if kept is not None else None

    def _bodies(self) -> None:
        """Each statement list cut by ddmin, the module's first, then the nested ones."""
        which = 0
        while which < passes.body_count(self.best):
            self._check_time()
            statements = passes.body_at(self.best, which)
            base = self.best
            at = which

            def first_kept(subsets: list[list[int]]) -> int | None:
                programs = [passes.with_body(base, at, [statements[i] for i in subset]) for subset in subsets]
                return self.judge(programs)

            kept = ddmin(list(range(len(statements))), first_kept)
            if len(kept) < len(statements):
                self._accept(passes.with_body(base, at, [statements[i] for i in kept]))
            which += 1


def _new(variants: Iterable[Program], accepted: set[str]) -> Iterator[Program]:
    """The variants never taken before (a pass that undoes another's step would go round for ever)."""
    for variant in variants:
        if variant.text not in accepted:
            yield variant
