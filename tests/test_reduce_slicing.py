"""The statements the op's line needs (kit/reduce/slicing.py): pure, nothing runs."""

from __future__ import annotations

import textwrap

from kit.reduce import slicing
from kit.reduce.program import Program

OP_PROGRAM = textwrap.dedent('''
    import os
    os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=4"
    import time
    import jax
    def step(a, b):
        k = a @ a
        alpha = jax.numpy.linalg.solve(k, b)
        return jax.numpy.sum(alpha * 2)
    t0 = time.perf_counter()
    a = jax.numpy.ones((8, 4, 4))
    b = jax.numpy.ones((8, 4))
    a = a * 2
    c = a + 1
    print("noise", c, time.perf_counter() - t0)
    print("result", jax.jit(step)(a, b))
    print("again", jax.jit(step)(a, b))
''')


def test_the_function_holding_the_op_ends_at_it_first() -> None:
    variants = list(slicing.sliced(Program.parse(OP_PROGRAM, op_line=8)))
    assert "        return alpha\n" not in variants[0].text
    assert "    alpha = jax.numpy.linalg.solve(k, b)\n    return alpha\n" in variants[0].text


def test_only_what_the_op_and_its_first_caller_need_is_kept() -> None:
    variants = list(slicing.sliced(Program.parse(OP_PROGRAM, op_line=8)))
    first_reader = variants[1].text
    assert "noise" not in first_reader and "time" not in first_reader and "again" not in first_reader
    assert "os.environ['XLA_FLAGS']" in first_reader  # read by no name, set before JAX starts
    assert "a = jax.numpy.ones((8, 4, 4))\n" in first_reader and "a = a * 2\n" in first_reader
    assert "print('result'" in first_reader
    assert "print('again'" in variants[2].text and "print('result'" not in variants[2].text
    assert all(v.has_mark for v in variants)


def test_a_program_without_a_marked_statement_has_no_slice() -> None:
    assert list(slicing.sliced(Program.parse(OP_PROGRAM))) == []
