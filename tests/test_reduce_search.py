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


OBJECT_PROGRAM = textwrap.dedent('''
    """A user's script built of a class, a config dictionary and a closure under a decorator."""
    import functools

    CONFIG = {"n": 6, "seed": 3, "label": "run"}


    class Model:
        def __init__(self, cfg):
            self.cfg = cfg
            self.scale = cfg["seed"] * 2

        def apply(self, x):
            return [v * self.scale for v in x]


    def make_step(model):
        @functools.lru_cache(maxsize=None)
        def step(k):
            return sum(model.apply(range(k))) % 11
        return step


    def main():
        cfg = dict(CONFIG, n=5)
        model = Model(cfg)
        step = make_step(model)
        print("start", cfg["label"])
        for i in range(cfg["n"]):
            value = step(i + 2)
        print("bad", value)


    if __name__ == "__main__":
        main()
''')


def test_a_program_of_objects_and_closures_is_flattened_to_a_few_statements() -> None:
    def judge(batch: list[Program], likely: bool) -> int | None:
        return next((i for i, p in enumerate(batch) if prints_bad(p)), None)

    start = Program.parse(OBJECT_PROGRAM)
    assert prints_bad(start)
    best = Reducer(start, judge).reduce()
    assert prints_bad(best)
    assert best.statements <= 2, best.text
    assert "class" not in best.text and "def " not in best.text


def test_every_batch_judged_is_told_with_what_was_tried() -> None:
    told: list[tuple[str, int, bool]] = []
    judged: list[int] = []

    def judge(batch: list[Program], likely: bool) -> int | None:
        judged.append(len(batch))
        return next((i for i, p in enumerate(batch) if prints_bad(p)), None)

    Reducer(Program.parse(USER_PROGRAM), judge, batch=lambda doing, size, kept: told.append((doing, size, kept))).reduce()
    assert [size for _, size, _ in told] == judged
    assert {doing for doing, _, _ in told} >= {"every structural pass at once", "ddmin"}
    assert any(kept for _, _, kept in told) and any(not kept for _, _, kept in told)


def test_the_reducer_says_whether_the_time_limit_ended_it() -> None:
    start = Program.parse(USER_PROGRAM)
    stopped = Reducer(start, lambda batch, likely: None, deadline=0.0)
    stopped.reduce()
    assert stopped.out_of_time
    ended = Reducer(start, lambda batch, likely: None)
    ended.reduce()
    assert not ended.out_of_time
