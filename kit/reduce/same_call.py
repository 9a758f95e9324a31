"""The catalogue entries whose own check calls the JAX function the reproducer calls, as it calls it.

Most catalogue entries of wrong values and exceptions declare no ``[difference]`` a run can be matched by, so a
reproducer of a catalogued bug matched none (the held-out trial's ``jnp.cumsum(x, dtype=np.bool_)``, the
catalogue's ``cumsum-bool-dtype``). The reproducer is small by then: the JAX function it calls is the bug's. An
entry matches by the call where its check calls the same ``jax.*`` function (not a common one: an array made,
a sum, a jit) with each keyword the check passes given the same value in the reproducer (a dtype by its name:
``bool``, ``np.bool_`` and ``jnp.bool_`` are one). A value the reproducer passes through its own variables (a
halo stencil's ``lambda a: jnp.pad(a, 1, constant_values=(l, r))``, ``l`` and ``r`` its function's parameters)
is not in its text: it agrees with the check's literal of the same form (a pair for a pair), so the call still
matches. Nothing runs here: the issue says it is a match by the call.
"""

from __future__ import annotations

import ast
from pathlib import Path

Call = tuple[str, frozenset[tuple[str, str]]]
"""A call: the function's dotted name (aliases written out), and its keywords with their values as text."""

COMMON = {"array", "asarray", "ones", "zeros", "ones_like", "zeros_like", "full", "arange", "linspace", "eye",
          "indices", "sum", "mean", "max", "min", "abs", "all", "any", "allclose", "isnan", "isfinite", "where",
          "reshape", "astype", "jit", "grad", "vmap", "device_put", "devices", "block_until_ready", "update",
          "print_environment_info", "float32", "float64", "int32", "int8", "dtype", "result_type", "Mesh",
          "NamedSharding", "PartitionSpec", "make_mesh", "stack", "concatenate", "tree_map", "issubdtype"}
"""Functions nearly every program calls: a match by one of them would name half the catalogue."""
_NUMPY_PREFIXES = ("jax.numpy.", "numpy.", "np.", "jnp.")


def calls(text: str) -> set[Call]:
    """The ``jax.*`` calls of a program's text, their names and keyword values with import aliases written out."""
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return set()
    aliases = _aliases(tree)
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            name = _written_out(ast.unparse(node.func), aliases)
            if name.startswith("jax.") and name.rsplit(".", 1)[-1] not in COMMON:
                keywords = frozenset((k.arg, _value(k.value, aliases)) for k in node.keywords if k.arg)
                found.add((name, keywords))
    return found


def matching(reproducer: str, check: Path) -> str | None:
    """The call ``check`` shares with the reproducer, as text (``jax.numpy.cumsum(dtype=bool)``); None: none."""
    try:
        theirs = calls(check.read_text(encoding="utf-8"))
    except OSError:
        return None
    mine, variables = calls(reproducer), _bound(reproducer)
    for name, keywords in sorted(theirs):
        if any(name == other and all(any(key == k and _agrees(value, v, variables) for k, v in given)
                                     for key, value in keywords) for other, given in mine):
            shown = ", ".join(f"{k}={v}" for k, v in sorted(keywords))
            return f"{name}({shown})"
    return None


def _bound(text: str) -> set[str]:
    """The names the program binds itself (parameters of its functions and lambdas, assignment targets)."""
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return set()
    names = {arg.arg for node in ast.walk(tree) if isinstance(node, ast.arguments)
             for arg in [*node.posonlyargs, *node.args, *node.kwonlyargs, node.vararg, node.kwarg] if arg}
    return names | {node.id for node in ast.walk(tree) if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store)}


def _agrees(theirs: str, mine: str, variables: set[str]) -> bool:
    """Whether the reproducer's keyword value ``mine`` may be the check's ``theirs``: the same text, or the same form
    where the reproducer's value is its own variable (``(l, r)`` for ``(-1.0, 9.0)``)."""
    if theirs == mine:
        return True
    try:
        literal, given = ast.parse(theirs, mode="eval").body, ast.parse(mine, mode="eval").body
    except SyntaxError:
        return False
    return _fits(literal, given, variables)


def _fits(literal: ast.expr, given: ast.expr, variables: set[str]) -> bool:
    if isinstance(given, ast.Name) and given.id in variables:
        return True
    if isinstance(given, (ast.Tuple, ast.List)) and isinstance(literal, (ast.Tuple, ast.List)):
        return len(given.elts) == len(literal.elts) and all(
            _fits(one, other, variables) for one, other in zip(literal.elts, given.elts))
    return ast.dump(literal) == ast.dump(given)


def _aliases(tree: ast.Module) -> dict[str, str]:
    out: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:
                    out[alias.asname] = alias.name
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            for alias in node.names:
                out[alias.asname or alias.name] = f"{node.module}.{alias.name}"
    return out


def _written_out(dotted: str, aliases: dict[str, str]) -> str:
    head, dot, rest = dotted.partition(".")
    return aliases.get(head, head) + dot + rest


def _value(node: ast.expr, aliases: dict[str, str]) -> str:
    """A keyword's value as text; a dtype by its bare name (``np.bool_``, ``jnp.bool_``, ``'bool'`` as ``bool``)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        text = node.value
    elif isinstance(node, ast.Call) and ast.unparse(node.func).endswith("dtype") and len(node.args) == 1:
        return _value(node.args[0], aliases)  # np.dtype(bool)
    else:
        text = _written_out(ast.unparse(node), aliases)
    for prefix in _NUMPY_PREFIXES:
        if text.startswith(prefix):
            text = text[len(prefix):]
    return text.rstrip("_") if text in ("bool_", "int_", "float_", "complex_") else text
