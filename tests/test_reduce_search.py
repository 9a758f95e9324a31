"""The whole reduction loop against a fake interestingness test: the program runs in this process (plain
Python, no JAX) and is kept where it still prints the "bad" line and does not raise."""

from __future__ import annotations

import contextlib
import io
import textwrap

from kit.reduce.program import Program
from kit.reduce.search import Reducer

USER_PROGRAM = textwrap.dedent('''
    """A user's script."""
    import argparse
    import time

    SCALE = 3


    def load(n):
        values = [i * SCALE for i in range(n)]
        return values


    def total(values):
        started = time.perf_counter()
        result = sum(values)
        print("took", time.perf_counter() - started)
        return result


    def main():
        parser = argparse.ArgumentParser()
        parser.add_argument("--count", type=int, default=10)
        args = parser.parse_args([])
        values = load(args.count)
        for step in range(3):
            print("step", step)
        print("bad", total(values) % 7)


    if __name__ == "__main__":
        main()
''')


def prints_bad(program: Program) -> bool:
    out = io.StringIO()
    try:
        with contextlib.redirect_stdout(out):
            exec(compile(program.text, "<candidate>", "exec"), {"__name__": "__main__"})
    except Exception:
        return False
    return "bad 2" in out.getvalue()


def test_the_fake_problem_holds_on_the_original() -> None:
    assert prints_bad(Program.parse(USER_PROGRAM))


def test_a_reduction_keeps_the_problem_and_cuts_most_statements() -> None:
    judged: list[str] = []

    def judge(batch: list[Program], likely: bool) -> int | None:
        judged.extend(p.text for p in batch)
        return next((i for i, p in enumerate(batch) if prints_bad(p)), None)

    start = Program.parse(USER_PROGRAM)
    steps: list[str] = []
    best = Reducer(start, judge, progress=lambda p, how: steps.append(how)).reduce()
    assert prints_bad(best)
    assert best.statements <= 2, best.text
    assert start.statements >= 20
    assert steps and steps[0] == "every structural pass at once"


def test_an_expired_time_limit_keeps_the_start() -> None:
    start = Program.parse(USER_PROGRAM)
    best = Reducer(start, lambda batch, likely: 0, deadline=0.0).reduce()
    assert best.text == start.text
