"""The reductions that know Python and JAX, each on a small program: pure, nothing runs."""

from __future__ import annotations

import textwrap

from kit.reduce import expressions, passes
from kit.reduce.program import Program


def program(text: str, op_line: int | None = None) -> Program:
    return Program.parse(textwrap.dedent(text), op_line)


def texts(variants) -> list[str]:
    return [v.text for v in variants]


def test_main_guard_is_unwrapped() -> None:
    p = program('''
        def main():
            print(1)
        if __name__ == "__main__":
            main()
    ''')
    assert "def main():\n    print(1)\nmain()\n" in texts(passes.unwrapped(p))


def test_a_loop_runs_once_with_its_first_value_or_its_last() -> None:
    p = program("for i in range(3, 9):\n    print(i)\n")
    assert texts(passes.unwrapped(p)) == ["i = 3\nprint(i)\n", "i = range(3, 9)[-1]\nprint(i)\n"]
    endless = program("import itertools\nfor i in itertools.count():\n    print(i)\n")
    assert len(texts(passes.unwrapped(endless))) == 1  # its first value only: listing it would never end


def test_with_keeps_what_as_named() -> None:
    p = program("with open('f') as sink:\n    sink.write('x')\n")
    assert texts(passes.unwrapped(p)) == ["sink = open('f')\nsink.write('x')\n"]


def test_a_call_is_inlined_and_the_function_dropped() -> None:
    p = program('''
        def f(a, b=2):
            c = a + b
            return c * 2
        x = f(1)
        print(x)
    ''')
    assert texts(passes.inlined_calls(p)) == ["a = 1\nb = 2\nc = a + b\nx = c * 2\nprint(x)\n"]


def test_a_recursive_function_is_never_inlined() -> None:
    p = program("def f(n):\n    return f(n - 1)\nf(3)\n")
    assert texts(passes.inlined_calls(p)) == []


def test_a_variable_read_once_is_written_where_it_is_read() -> None:
    p = program("x = compute()\nprint(x)\n")
    assert texts(passes.inlined_variables(p)) == ["print(compute())\n"]


def test_a_variable_assigned_twice_stays() -> None:
    p = program("x = 1\nx = 2\nprint(x)\n")
    assert texts(passes.inlined_variables(p)) == []


def test_grad_is_dropped_and_random_draws_become_ones() -> None:
    p = program("import jax\nimport jax.numpy as jnp\ny = jax.grad(f)(jax.random.normal(key, (4, 3)))\n")
    found = texts(expressions.simpler_expressions(p, expressions.numpy_name(p), integers=False))
    assert "import jax\nimport jax.numpy as jnp\ny = f(jax.random.normal(key, (4, 3)))\n" in found
    assert "import jax\nimport jax.numpy as jnp\ny = jax.grad(f)(jnp.ones((4, 3), jnp.float32))\n" in found


def test_numpy_generator_draws_read_their_shape() -> None:
    p = program("import numpy as np\nx = np.random.default_rng(0).standard_normal((3, 4))\n")
    found = texts(expressions.simpler_expressions(p, expressions.numpy_name(p), integers=False))
    assert "import numpy as np\nx = np.ones((3, 4), np.float32)\n" in found


def test_integers_shrink_only_when_asked() -> None:
    p = program("x = f(8)\n")
    assert "x = f(1)\n" in texts(expressions.simpler_expressions(p, None, integers=True))
    assert "x = f(1)\n" not in texts(expressions.simpler_expressions(p, None, integers=False))


def test_unused_definitions_go_at_once_and_calls_stay() -> None:
    p = program('''
        """doc"""
        import os
        import sys
        N = 3
        def helper():
            return N
        y = work()
        print(sys.argv)
    ''')
    assert texts(passes.without_unused(p)) == ["import sys\ny = work()\nprint(sys.argv)\n"]


def test_argparse_options_read_as_their_defaults() -> None:
    p = program('''
        import argparse
        parser = argparse.ArgumentParser()
        parser.add_argument("--steps", type=int, default=5)
        parser.add_argument("--fast", action="store_true")
        args = parser.parse_args()
        run(args.steps, args.fast)
    ''')
    assert texts(passes.argparse_defaults(p))[0].endswith("run(5, False)\n")


def test_an_alias_import_is_folded_into_its_package() -> None:
    p = program("import jax\nimport jax.numpy as jnp\nfrom jax.sharding import Mesh\nprint(jnp.ones(2), Mesh)\n")
    found = texts(passes.imports_folded(p))
    assert "import jax\nfrom jax.sharding import Mesh\nprint(jax.numpy.ones(2), Mesh)\n" in found
    assert "import jax\nimport jax.numpy as jnp\nprint(jnp.ones(2), jax.sharding.Mesh)\n" in found


def test_a_one_line_function_becomes_a_lambda() -> None:
    p = program("def f(x):\n    return x + 1\nprint(f(2))\n")
    assert texts(passes.as_lambdas(p)) == ["f = lambda x: x + 1\nprint(f(2))\n"]


def test_plausible_refuses_unbound_names_and_a_lost_op() -> None:
    assert not passes.plausible(program("print(x)\n"), need_mark=False)
    assert passes.plausible(program("x = 1\nprint(x)\n"), need_mark=False)
    marked = program("x = 1\ny = abs(x)\n", op_line=2)
    assert passes.plausible(marked, need_mark=True)
    assert not passes.plausible(passes.with_body(marked, 0, passes.body_at(marked, 0)[:1]), need_mark=True)


def test_the_op_statement_is_found_again_after_inlining() -> None:
    p = program('''
        import jax
        def loss(m):
            m = m * 2
            return jax.numpy.linalg.slogdet(m)[1]
        y = loss(2.0)
    ''', op_line=5)
    assert p.marked_lines() == (5, 5)
    inlined = texts(passes.inlined_calls(p))
    assert inlined
    again = next(iter(passes.inlined_calls(p)))
    first, last = again.marked_lines() or (0, 0)
    assert "slogdet" in again.text.splitlines()[first - 1]


def test_a_module_variable_is_inlined_past_a_function_that_binds_its_name_as_its_own() -> None:
    p = program("def smooth(traces, window):\n    traces = window\n    return traces\n"
                "traces = (1,)\nprint(smooth(traces, 2), traces)\n")
    assert ("def smooth(traces, window):\n    traces = window\n    return traces\nprint(smooth((1,), 2), (1,))\n"
            in texts(passes.inlined_variables(p)))
    reads = program("def f():\n    return x\ndef g(x):\n    return x\nx = 3\nprint(f(), g(4))\n")
    assert "def f():\n    return 3\n\ndef g(x):\n    return x\nprint(f(), g(4))\n" in texts(passes.inlined_variables(reads))


def test_a_value_assigned_then_returned_is_returned() -> None:
    p = program("def smooth(traces):\n    traces = traces * 2\n    return traces\nprint(smooth(1))\n")
    assert "def smooth(traces):\n    return traces * 2\nprint(smooth(1))\n" in texts(passes.inlined_variables(p))
    declared = program("def f():\n    global y\n    y = 2\n    return y\ny = 1\nprint(f(), y)\n")
    assert not any("return 2" in text for text in texts(passes.inlined_variables(declared)))
