"""A program's inputs made fixed and simple: the clock read as a constant, a draw as a fixed array of both signs,
a key chain nothing draws from dropped, a constant's f-string field written as it prints."""

from __future__ import annotations

import ast

from kit.reduce import expressions, inputs
from kit.reduce.program import Program
from kit.reduce.rewrites import folded_fields
from kit.reduce.search import tidy

ACCT = """import numpy as np
import jax
key = jax.random.PRNGKey(0)
key, sub = jax.random.split(key)
k1, k2 = jax.random.split(sub)
print(f'   active fraction: {0:.2f} {jax.numpy.cumsum(jax.random.randint(k1, (4, 2), -1, 2), axis=1, dtype=np.bool_)}')
"""


def test_the_clock_is_read_as_a_constant_and_an_unseeded_generator_is_seeded() -> None:
    program = Program.parse("import time\nimport numpy as np\nseed = int(time.time() * 1000) % 2**31\n"
                            "t0 = time.perf_counter()\nrng = np.random.default_rng()\nother = np.random.default_rng(5)\n")
    fixed = next(inputs.times_fixed(program)).text
    assert "seed = int(1 * 1000) % 2 ** 31" in fixed and "t0 = 1" in fixed
    assert "default_rng(0)" in fixed and "default_rng(5)" in fixed
    assert list(inputs.times_fixed(Program.parse(fixed))) == []  # nothing left to fix: no variant
    waiting = "import time\nt0 = time.time()\nwhile time.time() - t0 < 5:\n    pass\n"
    assert next(inputs.times_fixed(Program.parse(waiting))).text == waiting.replace("t0 = time.time()", "t0 = 1")


def test_a_draw_becomes_a_fixed_array_of_both_signs_in_its_own_range_and_its_key_chain_goes() -> None:
    program = Program.parse(ACCT)
    variants = [v.text for v in expressions.simpler_expressions(program, "jax.numpy", integers=False)]
    fixed = [t for t in variants if "jax.numpy.array([[" in t]
    assert len(fixed) == 1
    assert "jax.numpy.array([[-1, 0], [0, 1], [1, -1], [-1, 0]])" in fixed[0]  # (i + j) % 3 - 1: randint's -1..1
    assert any("jax.numpy.ones((4, 2)" in t for t in variants)  # ones still tried first
    reduced = tidy(Program.parse(fixed[0]))
    assert "random" not in reduced.text and reduced.statements == 3, reduced.text  # imports and the print


def test_a_large_draw_is_an_expression_of_its_shape_that_still_runs_as_numpy() -> None:
    import numpy as np
    large = inputs.patterned("np", ast.parse("(64, 90)", mode="eval").body, -1, 3, True)
    values = eval(ast.unparse(large), {"np": np})
    assert values.shape == (64, 90) and values.dtype == np.float32 and {-1.0, 0.0, 1.0} == set(values.ravel())
    line = inputs.patterned("np", ast.parse("(100,)", mode="eval").body, 0, 2, False)
    assert ast.unparse(line) == "np.arange(100) % 2 + 0"


def test_a_key_read_only_by_its_own_split_goes_but_one_a_loop_reads_again_stays() -> None:
    gone = tidy(Program.parse("import jax\nkey = jax.random.PRNGKey(0)\nkey, sub = jax.random.split(key)\nprint(1)\n"))
    assert gone.text == "print(1)\n"
    loop = ("import jax\nkey = jax.random.PRNGKey(0)\nfor i in range(3):\n    key, sub = jax.random.split(key)\n"
            "    print(jax.random.normal(sub))\n")
    assert tidy(Program.parse(loop)).text == Program.parse(loop).text


def test_a_constant_field_is_written_as_it_prints_and_the_line_stays_the_same() -> None:
    program = Program.parse("x = 2.5\nprint(f'day {0:.2f} {0} {x:.1f} {0!r}')\n")
    folded = next(folded_fields(program)).text
    assert folded == "x = 2.5\nprint(f'day 0.00 0 {x:.1f} {0!r}')\n"
    assert next(folded_fields(Program.parse("print(f'Q{0}: {0:.1f} ms')\n"))).text == "print('Q0: 0.0 ms')\n"
