"""The reduction loop: the passes, coarse first, each variant judged, until no pass makes the program smaller.

The structure first, as one variant (every structural pass, `kit.reduce.flatten` and `kit.reduce.rewrites`,
applied until none changes the program: calls, methods and constructors inlined, objects as variables,
config lookups read); then statements (with ``--op`` the op's slice, `kit.reduce.slicing`; each statement
list cut by ddmin; the structural passes one at a time), then expressions (``grad`` dropped, random draws
as ones, calls by an argument), then statements again; integers last, while time is left. Every variant is
tidied before it is judged (`tidy`: what nothing reads dropped, never a run of its own). A variant is judged by ``judge`` (`Tester`:
a batch of variants, the index of the first that keeps the problem), which never runs one twice. The
best program so far is kept on `Reducer.best` as it improves, so a stop (Ctrl-C, the time limit) keeps it.
"""

from __future__ import annotations

import time
from typing import Callable, Iterable, Iterator

from .ddmin import ddmin
from . import expressions, flatten, inputs, passes, rewrites, slicing
from .program import Program

Judge = Callable[[list[Program], bool], "int | None"]
"""A batch of variants in order, and whether the first is likely kept -> the index of the first that still shows
the problem (None: none does)."""

LIKELY = 8
"""Passes whose first variant is usually kept (a wrapper unwrapped, a call inlined): judged one at a time, both
releases side by side, rather than several variants at once."""


STRUCTURAL = (passes.argparse_defaults, passes.unwrapped, flatten.inlined_calls, flatten.methods_as_functions,
              flatten.attributes_as_names, rewrites.dict_lookups, rewrites.class_defaults, passes.without_unused,
              passes.as_lambdas, passes.inlined_variables, rewrites.applied_lambdas, rewrites.split_assignments,
              passes.imports_folded, inputs.times_fixed)
"""The passes that flatten a program without cutting what it computes."""

FLAT_ROUNDS = 60
"""Rounds of every structural pass before the flat program is judged (each round one step of each)."""


EXPRESSION_STEPS = 3
"""Expressions simplified between two rounds of the statement passes: a simpler expression often frees a
statement (a key no longer used), and statements are what the reduction is measured by."""


class OutOfTime(Exception):
    """The time limit passed: the best program so far is the answer."""


class Reducer:
    def __init__(self, start: Program, judge: Judge, deadline: float | None = None,
                 progress: Callable[[Program, str], None] = lambda _p, _w: None,
                 batch: Callable[[str, int, bool], None] = lambda _w, _n, _k: None) -> None:
        self.best = start
        self._judge = judge
        self.deadline = deadline
        self.progress = progress
        self.batch = batch
        """Told after each batch judged: what was tried, how many variants, whether one was kept."""
        self.doing = "every structural pass at once"
        self.accepted = {start.text}
        self.out_of_time = False
        """Whether the time limit ended the reduction (the best so far, not the passes' end, is the answer)."""

    def judge(self, batch: list[Program], likely: bool) -> int | None:
        kept = self._judge(batch, likely)
        self.batch(self.doing, len(batch), kept is not None)
        return kept

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
            self.out_of_time = True
        return self.best

    def _structure(self) -> None:
        """Every structural pass applied everywhere, as one variant (and again without dropping decorators such
        as ``@jax.jit``, where that one is not kept): a program that is a few calls and objects deep is flat
        after one or two runs where that holds."""
        self.doing = "every structural pass at once"
        for steps in (STRUCTURAL + (rewrites.undecorated,), STRUCTURAL):
            flat = flattened(self.best, steps)
            if flat.text not in self.accepted and self.judge([flat], True) == 0:
                self._accept(flat, "every structural pass at once")
                return

    def _statements(self) -> None:
        before = None
        while before != self.best.text:
            before = self.best.text
            self._greedy(passes.without_unused)
            self._greedy(passes.argparse_defaults)
            self._greedy(inputs.times_fixed)
            if self.best.has_mark:
                self._greedy(slicing.sliced)
            self._bodies()
            self._greedy(rewrites.printed_constants, False)
            self._greedy(passes.unwrapped)
            self._greedy(rewrites.dict_lookups)
            self._greedy(rewrites.class_defaults)
            self._greedy(flatten.inlined_calls)
            self._greedy(rewrites.undecorated)
            self._greedy(flatten.inlined_calls)
            self._greedy(flatten.methods_as_functions)
            self._greedy(flatten.attributes_as_names)
            self._greedy(passes.without_unused)
            self._greedy(passes.as_lambdas)
            self._greedy(passes.inlined_variables, False)
            self._greedy(rewrites.applied_lambdas)
            self._greedy(rewrites.split_assignments)
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
        self.doing = getattr(variants, "__name__", "expressions").replace("<lambda>", "expressions")
        whole = tidy(exhausted(variants, self.best))
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
        self.doing = "ddmin"
        while which < passes.body_count(self.best):
            self._check_time()
            statements = passes.body_at(self.best, which)
            base = self.best
            at = which

            def first_kept(subsets: list[list[int]]) -> int | None:
                self._check_time()
                programs = [tidy(passes.with_body(base, at, [statements[i] for i in subset])) for subset in subsets]
                return self.judge(programs, False)

            kept = ddmin(list(range(len(statements))), first_kept)
            if len(kept) < len(statements):
                self._accept(tidy(passes.with_body(base, at, [statements[i] for i in kept])), "ddmin")
            which += 1


def flattened(program: Program, steps: tuple[Callable[[Program], Iterable[Program]], ...]) -> Program:
    """``program`` with each pass's first variant taken in turn, round after round, until none changes it."""
    for _ in range(FLAT_ROUNDS):
        before = program.text
        for step in steps:
            program = next(iter(step(program)), program)
        if program.text == before:
            break
    return program


def tidy(program: Program) -> Program:
    """``program`` without the definitions nothing reads (an import, a function, a class, an assignment of a
    value no call makes, a key nothing draws from) and each f-string field of a constant written as it prints:
    made with every variant, never a variant of its own to run."""
    program = next(iter(rewrites.folded_fields(program)), program)
    return next(iter(passes.without_unused(program)), program)


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
        variant = tidy(variant)
        if variant.text not in accepted:
            yield variant
