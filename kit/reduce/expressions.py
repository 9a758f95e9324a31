"""Expressions made simpler, one at a time (pure: nothing runs here).

``jax.grad(f)`` and its kin replaced by ``f`` (the forward shows it), a random draw by an array of ones of
its shape or by a fixed array of small values of both signs (`kit.reduce.inputs.patterned`), a call by one of its arguments (``jnp.asarray(x)`` by ``x``, ``x.astype(t)`` by ``x``), a binary
operation by one side, a keyword argument dropped, a list or tuple cut, an integer made smaller (shapes,
batches, device counts: a sharding the program needs refuses what does not divide).
"""

from __future__ import annotations

import ast
import copy
from functools import partial
from typing import Callable, Iterator

from . import inputs
from .program import Program

GRADS = {"grad", "value_and_grad", "jacfwd", "jacrev", "hessian", "jacobian"}
RANDOM_DRAWS = {"normal", "uniform", "standard_normal", "randn", "rand", "random", "integers", "randint",
                "truncated_normal", "bernoulli", "choice", "permutation", "gumbel", "laplace", "exponential",
                "gamma", "beta", "multivariate_normal", "orthogonal", "ball", "rademacher", "cauchy", "logistic"}


def simpler_expressions(program: Program, numpy: str | None, integers: bool = True) -> Iterator[Program]:
    """Each expression replaced by a simpler one (see the module's docstring); ``numpy``: the name the program
    imports numpy (or jax.numpy) as, for arrays of ones."""
    count = sum(1 for _ in ast.walk(program.tree))
    for index in range(count):
        node = _walked(program.tree, index)
        for make in _simplifications(node, numpy, integers):
            yield _replaced(program, index, make)


def _walked(tree: ast.AST, index: int) -> ast.AST:
    for at, node in enumerate(ast.walk(tree)):
        if at == index:
            return node
    raise IndexError(index)


def _replaced(program: Program, index: int, make: Callable[[ast.AST], ast.AST]) -> Program:
    out = program.copy()
    target = _walked(out.tree, index)
    for parent in ast.walk(out.tree):
        for name, value in ast.iter_fields(parent):
            if value is target:
                setattr(parent, name, make(target))
                return out
            if isinstance(value, list) and any(item is target for item in value):
                setattr(parent, name, [make(item) if item is target else item for item in value])
                return out
    return out


def _simplifications(node: ast.AST, numpy: str | None, integers: bool) -> list[Callable[[ast.AST], ast.AST]]:
    out: list[Callable[[ast.AST], ast.AST]] = []
    if isinstance(node, ast.Call):
        name = _dotted(node.func)
        last = name.rsplit(".", 1)[-1]
        if last in GRADS and node.args:
            out.append(partial(_argument, 0))
        shape = _drawn_shape(node, name, last)
        if shape is not None and numpy:
            out.append(partial(_ones_for, numpy, shape))
            low, span, floats = inputs.draw_range(node, last)
            out.append(partial(_patterned_for, numpy, shape, low, span, floats))
        out += [partial(_argument, k) for k, a in enumerate(node.args) if not isinstance(a, ast.Starred)]
        if isinstance(node.func, ast.Attribute) and not _is_module_path(node.func.value):
            out.append(_receiver)
        out += [partial(_without_keyword, k) for k in range(len(node.keywords))]
    elif isinstance(node, ast.FormattedValue) and not isinstance(node.value, ast.Constant):
        out.append(_printed_constant)  # the line printed keeps its shape, what the value needed can go
    elif isinstance(node, ast.BinOp):
        out += [partial(_operand, "left"), partial(_operand, "right")]
    elif isinstance(node, (ast.List, ast.Tuple)) and isinstance(node.ctx, ast.Load) and len(node.elts) >= 2:
        out += [partial(_cut, 1), partial(_cut, len(node.elts) - 1)]
    elif integers and isinstance(node, ast.Constant) and type(node.value) is int and node.value >= 2:
        out += [partial(_constant, smaller) for smaller in sorted({1, 2, node.value // 2}) if smaller < node.value]
    return out


def _printed_constant(node: ast.AST) -> ast.AST:
    assert isinstance(node, ast.FormattedValue)
    return ast.FormattedValue(ast.Constant(0), node.conversion, node.format_spec)


def _argument(k: int, node: ast.AST) -> ast.AST:
    assert isinstance(node, ast.Call)
    return copy.deepcopy(node.args[k])


def _receiver(node: ast.AST) -> ast.AST:
    assert isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
    return copy.deepcopy(node.func.value)


def _operand(side: str, node: ast.AST) -> ast.AST:
    assert isinstance(node, ast.BinOp)
    return copy.deepcopy(node.left if side == "left" else node.right)


def _constant(value: int, _node: ast.AST) -> ast.AST:
    return ast.Constant(value)


def _ones_for(numpy: str, shape: ast.expr, _node: ast.AST) -> ast.AST:
    return _ones(numpy, shape)


def _patterned_for(numpy: str, shape: ast.expr, low: int, span: int, floats: bool, _node: ast.AST) -> ast.AST:
    return inputs.patterned(numpy, shape, low, span, floats)


def _dotted(node: ast.AST) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return _dotted(node.value) + "." + node.attr
    if isinstance(node, ast.Call):
        return _dotted(node.func) + "()"
    return "?"


def _is_module_path(node: ast.AST) -> bool:
    """``jax.numpy`` in ``jax.numpy.ones(...)``: a module, never a value to keep in the call's place."""
    return isinstance(node, (ast.Name, ast.Attribute)) and all(
        isinstance(n, (ast.Name, ast.Attribute, ast.Load)) for n in ast.walk(node)) and (
        _dotted(node).split(".")[0] in {"jax", "jnp", "np", "numpy", "lax", "scipy", "jsp", "random", "math"})


def _drawn_shape(call: ast.Call, name: str, last: str) -> ast.expr | None:
    """The shape a random draw makes, where the call says it (None: not a draw, or no shape to read)."""
    if last not in RANDOM_DRAWS or not any(part in name for part in ("random", "rng", "default_rng", "key")):
        return None
    for keyword in call.keywords:
        if keyword.arg in ("shape", "size"):
            return keyword.value
    if name.startswith(("jax.random.", "random.", "jr.")):
        return call.args[1] if len(call.args) >= 2 else ast.Tuple([], ast.Load())
    if last in ("randn", "rand"):
        return ast.Tuple(list(call.args), ast.Load())
    position = {"standard_normal": 0, "random": 0, "normal": 2, "uniform": 2, "integers": 2, "randint": 2}.get(last)
    if position is not None and len(call.args) > position:
        return call.args[position]
    return None


def _ones(numpy: str, shape: ast.expr) -> ast.expr:
    call = ast.parse(f"{numpy}.ones(0, {numpy}.float32)", mode="eval").body
    assert isinstance(call, ast.Call)
    call.args[0] = copy.deepcopy(shape)
    return call


def _without_keyword(k: int, node: ast.AST) -> ast.AST:
    assert isinstance(node, ast.Call)
    return ast.Call(node.func, node.args, node.keywords[:k] + node.keywords[k + 1:])


def _cut(keep: int, node: ast.AST) -> ast.AST:
    assert isinstance(node, (ast.List, ast.Tuple))
    return type(node)(node.elts[:keep], node.ctx)


def numpy_name(program: Program) -> str | None:
    """The name the program imports jax.numpy as (else numpy's), for arrays of ones; None where neither. JAX's
    first: a reproducer that needs no numpy import is a statement shorter."""
    found: dict[str, str] = {}
    for node in ast.walk(program.tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name in ("numpy", "jax.numpy") and alias.asname:
                    found.setdefault(alias.name, alias.asname)
                elif alias.name == "numpy":
                    found.setdefault("numpy", "numpy")
    plain_jax = any(isinstance(node, ast.Import) and any(a.name == "jax" and not a.asname for a in node.names)
                    for node in program.tree.body)
    return found.get("jax.numpy") or ("jax.numpy" if plain_jax else None) or found.get("numpy")
