"""A program's inputs made fixed and simple (pure: nothing runs here).

* `times_fixed`: what the clock says read as a constant (``time.time()``, ``time.perf_counter()``, ...) and an
  unseeded generator seeded (``np.random.default_rng()``): a program seeded from the time prints another draw
  each run, and a reproducer must print the same each run. One variant.
* `patterned`: a random draw of a shape the program writes out replaced by a fixed array of small values of
  both signs (``jnp.array([[-1, 0], [1, -1]])``; a larger one as ``jnp.indices(shape).sum(0) % 3 - 1``): an
  array of ones cannot show what depends on values that cancel (a cumsum that returns to 0), and once the
  draw is gone its key and the ``split`` chain that made it go too.
"""

from __future__ import annotations

import ast
import math
from typing import Iterator

from .program import Program

CLOCKS = {"time", "perf_counter", "monotonic", "process_time", "time_ns", "perf_counter_ns", "monotonic_ns"}
"""``time.X()`` calls whose value differs from run to run."""
UNSEEDED = {"default_rng", "RandomState", "PRNGKey", "key", "Random"}
"""Generators that, called without a seed, draw from the machine's entropy (``PRNGKey`` needs one)."""
LITERAL_MAX = 16
"""A fixed array of at most this many values is written out as a literal; a larger one as an expression."""


def times_fixed(program: Program) -> Iterator[Program]:
    """One variant: every clock read as ``1`` and every unseeded generator seeded with ``0`` (inside a ``while``
    loop nothing: a loop that waits on the clock would never end)."""

    class Fix(ast.NodeTransformer):
        def visit_While(self, node: ast.While) -> ast.AST:
            return node  # ``while time.time() - t0 < 5:`` with the clock fixed would never end

        def visit_Call(self, node: ast.Call) -> ast.AST:
            self.generic_visit(node)
            func = node.func
            if (isinstance(func, ast.Attribute) and func.attr in CLOCKS and isinstance(func.value, ast.Name)
                    and func.value.id == "time" and not node.args and not node.keywords):
                return ast.copy_location(ast.Constant(1), node)
            if (isinstance(func, ast.Attribute) and func.attr in UNSEEDED - {"PRNGKey", "key"} and not node.args
                    and not node.keywords):
                return ast.copy_location(ast.Call(func, [ast.Constant(0)], []), node)
            return node

    out = program.copy()
    changed = Program(Fix().visit(out.tree))
    if changed.text != program.text:
        yield changed


def literal_shape(shape: ast.expr) -> tuple[int, ...] | None:
    """The shape as integers, where the program writes it out (``(4, 2)``, ``8``, ``(8,)``)."""
    if isinstance(shape, ast.Constant) and type(shape.value) is int:
        return (shape.value,)
    if isinstance(shape, (ast.Tuple, ast.List)) and all(
            isinstance(e, ast.Constant) and type(e.value) is int for e in shape.elts):
        return tuple(e.value for e in shape.elts if isinstance(e, ast.Constant) and isinstance(e.value, int))
    return None


def patterned(numpy: str, shape: ast.expr, low: int, span: int, floats: bool) -> ast.expr:
    """A fixed array of ``shape``: the value at index (i, j, ...) is ``(i + j + ...) % span + low``."""
    sizes = literal_shape(shape)
    if sizes is not None and 0 < math.prod(sizes) <= LITERAL_MAX and all(s > 0 for s in sizes):
        values = _nested(sizes, (), low, span, floats)
        return ast.parse(f"{numpy}.array({values!r})", mode="eval").body
    shown = ast.unparse(shape)
    one = shape if isinstance(shape, ast.Constant) else shape.elts[0] if (
        isinstance(shape, (ast.Tuple, ast.List)) and len(shape.elts) == 1) else None
    grid = f"{numpy}.arange({ast.unparse(one)})" if one is not None else f"{numpy}.indices({shown}).sum(0)"
    text = f"{grid} % {span} + {low}" if low >= 0 else f"{grid} % {span} - {-low}"
    return ast.parse(f"({text}).astype({numpy}.float32)" if floats else text, mode="eval").body


def _nested(sizes: tuple[int, ...], index: tuple[int, ...], low: int, span: int, floats: bool) -> object:
    if len(index) == len(sizes):
        value = sum(index) % span + low
        return float(value) if floats else value
    return [_nested(sizes, index + (k,), low, span, floats) for k in range(sizes[len(index)])]


def draw_range(call: ast.Call, last: str) -> tuple[int, int, bool]:
    """The (low, span, floats) of the fixed values that stand for a draw: a ``randint``'s own range where it
    writes one out (at most 5 values of it), else -1, 0 and 1 (floats for a float draw)."""
    if last in ("randint", "integers"):
        bounds = [a for a in call.args[2:4]] if last == "randint" else [a for a in call.args[0:2]]
        named = {k.arg: k.value for k in call.keywords}
        low = named.get("minval", named.get("low", bounds[0] if bounds else None))
        high = named.get("maxval", named.get("high", bounds[1] if len(bounds) > 1 else None))
        ints = [_int(low), _int(high)]
        if ints[0] is not None and ints[1] is not None and ints[1] > ints[0]:
            return ints[0], min(ints[1] - ints[0], 5), False
        return -1, 3, False
    if last == "bernoulli":
        return 0, 2, False
    if last in ("choice", "permutation", "rademacher"):
        return -1, 3, False
    return -1, 3, True


def _int(node: ast.expr | None) -> int | None:
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) and isinstance(node.operand, ast.Constant) \
            and type(node.operand.value) is int:
        return -node.operand.value
    return None
