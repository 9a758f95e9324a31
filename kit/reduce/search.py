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
from . import expressions, passes
from .program import Program

Judge = Callable[[list[Program], bool], "int | None"]
"""A batch of variants in order, and whether the first is likely kept -> the index of the first that still shows
the problem (None: none does)."""

LIKELY = 8
"""Passes whose first variant is usually kept (a wrapper unwrapped, a call inlined): judged one at a time, both
releases side by side, rather than several variants at once."""


STRUCTURAL = (passes.argparse_defaults, passes.unwrapped, passes.inlined_calls, passes.without_unused,
              passes.as_lambdas, passes.inlined_variables, passes.imports_folded, passes.without_unused)
"""The passes that flatten a program without cutting what it computes."""


EXPRESSION_STEPS = 3
"""Expressions simplified between two rounds of the statement passes: a simpler expression often frees a
statement (a key no longer used), and statements are what the reduction is measured by."""


class OutOfTime(Exception):
    """The time limit passed: the best program so far is the answer."""


class Reducer:
    def __init__(self, start: Program, judge: Judge, deadline: float | None = None,
                 progress: Callable[[Program, str], None] = lambda _p, _w: None) -> None:
        self.best = start
        self.judge = judge
        self.deadline = deadline
        self.progress = progress
        self.accepted = {start.text}

    def reduce(self) -> Program:
        """The smallest program the passes reach (the best so far where time runs out)."""
        try:
            self._check_time()
            self._structure()
            before = None
            while before != self.best.text:  # statements, then a few expressions, until neither takes a step
                before = self.best.text
                self._statements()
                self._greedy(lambda p: expressions.simpler_expressions(p, expressions.numpy_name(p), integers=False), False,
                             steps=EXPRESSION_STEPS)
            self._greedy(lambda p: expressions.simpler_expressions(p, expressions.numpy_name(p), integers=True), False)
            self._statements()
        except OutOfTime:
            pass
        return self.best

    def _structure(self) -> None:
        """Every structural pass applied everywhere, as one variant: a program that is a few calls deep is flat
        after one run where that holds."""
        flat = self.best
        for step in STRUCTURAL:
            flat = exhausted(step, flat)
        if flat.text not in self.accepted and self.judge([flat], True) == 0:
            self._accept(flat, "every structural pass at once")

    def _statements(self) -> None:
        before = None
        while before != self.best.text:
            before = self.best.text
            self._greedy(passes.without_unused)
            self._greedy(passes.argparse_defaults)
            self._bodies()
            self._greedy(passes.unwrapped)
            self._greedy(passes.inlined_calls)
            self._greedy(passes.without_unused)
            self._greedy(passes.as_lambdas)
            self._greedy(passes.inlined_variables, False)
            self._greedy(passes.imports_folded)

    def _accept(self, program: Program, how: str) -> None:
        self.best = program
        self.accepted.add(program.text)
        self.progress(program, how)

    def _check_time(self) -> None:
        if self.deadline is not None and time.monotonic() > self.deadline:
            raise OutOfTime()

    def _greedy(self, variants: Callable[[Program], Iterable[Program]], likely: bool = True,
                steps: int | None = None) -> None:
        """Take the first variant that keeps the problem, again and again, until none does; the pass applied
        everywhere at once is tried first (one run where it holds, instead of one a step)."""
        whole = exhausted(variants, self.best)
        if whole.text != self.best.text and whole.text not in self.accepted and self.judge([whole], True) == 0:
            self._accept(whole, getattr(variants, "__name__", "expressions") + " everywhere")
        taken = 0
        while steps is None or taken < steps:
            self._check_time()
            taken += 1
            found = self._first(variants(self.best), likely=likely)
            if found is None:
                return
            self._accept(found, getattr(variants, "__name__", "expressions").replace("<lambda>", "expressions"))

    def _first(self, variants: Iterable[Program], batch: int = 8, likely: bool = False) -> Program | None:
        """The first of ``variants`` that keeps the problem, judged a batch at a time (the judge runs a batch's
        variants side by side, and stops at the first kept)."""
        pending: list[Program] = []
        for variant in _new(variants, self.accepted):
            pending.append(variant)
            if len(pending) == batch:
                kept = self.judge(pending, likely)
                if kept is not None:
                    return pending[kept]
                pending = []
                self._check_time()
        kept = self.judge(pending, likely) if pending else None
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
                self._check_time()
                programs = [passes.with_body(base, at, [statements[i] for i in subset]) for subset in subsets]
                return self.judge(programs, False)

            kept = ddmin(list(range(len(statements))), first_kept)
            if len(kept) < len(statements):
                self._accept(passes.with_body(base, at, [statements[i] for i in kept]), "ddmin")
            which += 1


def exhausted(variants: Callable[[Program], Iterable[Program]], program: Program, steps: int = 100) -> Program:
    """``program`` with the pass's first variant taken again and again, unjudged, until it has none left."""
    for _ in range(steps):
        step = next(iter(variants(program)), None)
        if step is None or step.text == program.text:
            break
        program = step
    return program


def _new(variants: Iterable[Program], accepted: set[str]) -> Iterator[Program]:
    """The variants never taken before (a pass that undoes another's step would go round for ever)."""
    for variant in variants:
        if variant.text not in accepted:
            yield variant
