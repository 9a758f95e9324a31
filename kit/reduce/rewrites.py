"""Rewrites that free a program's statements for the cuts (pure: nothing runs here).

* `undecorated`: a decorator dropped (``@jax.jit``: the problem shows without it more often than not, and
  the function can then be inlined, `kit.reduce.flatten`).
* `dict_lookups`: ``CONFIG["key"]`` read from the dictionary a variable is bound to once, written out.
* `class_defaults`: ``cfg.n`` of a settings class (a ``@dataclass``) written out.
* `applied_lambdas`: ``(lambda a: E)(x)`` as ``E`` with ``x`` for ``a``.
* `split_assignments`: ``a, b = (x, y)`` as two assignments, each free to go.
* `printed_constants`: a value a ``print`` writes as ``0`` (the line keeps its shape).
"""

from __future__ import annotations

import ast
import copy
from typing import Iterator

from .flatten import names_in, spliced, binding_counts, body_lists
from .program import Program, carry


def undecorated(program: Program) -> Iterator[Program]:
    """Each decorator of a function dropped (``@jax.jit``, ``@partial(...)``; ``@staticmethod`` stays)."""
    for which, (owner, name) in enumerate(body_lists(program.tree)):
        for at, statement in enumerate(getattr(owner, name)):
            if not isinstance(statement, ast.FunctionDef):
                continue
            for k, decorator in enumerate(statement.decorator_list):
                if isinstance(decorator, ast.Name) and decorator.id in ("staticmethod", "classmethod"):
                    continue
                bare = copy.deepcopy(statement)
                bare.decorator_list = bare.decorator_list[:k] + bare.decorator_list[k + 1:]
                yield spliced(program, which, at, [carry(statement, bare)])


def dict_lookups(program: Program) -> Iterator[Program]:
    """One variant: each ``d["key"]`` of a dictionary ``d`` is bound to once (a literal, or ``dict(D, k=v)``)
    written out, where the value is simple enough to write twice (a constant, a name)."""
    counts = binding_counts(program.tree)
    known: dict[str, dict[str, ast.expr]] = {}
    for node in ast.walk(program.tree):
        if (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)
                and counts.get(node.targets[0].id) == 1):
            entries = _dict_entries(node.value, known)
            if entries is not None:
                known[node.targets[0].id] = entries

    class Lookup(ast.NodeTransformer):
        def visit_Subscript(self, node: ast.Subscript) -> ast.AST:
            self.generic_visit(node)
            if not (isinstance(node.ctx, ast.Load) and isinstance(node.slice, ast.Constant)):
                return node
            entries = (known.get(node.value.id) if isinstance(node.value, ast.Name)
                       else _dict_entries(node.value, known))  # ``{"n": 4}["n"]``, ``dict(D, n=8)["n"]``
            if entries is not None and node.slice.value in entries:
                return copy.deepcopy(entries[node.slice.value])
            return node

    out = program.copy()
    changed = Program(Lookup().visit(out.tree))
    if changed.text != program.text:
        yield changed


def _dict_entries(value: ast.expr, known: dict[str, dict[str, ast.expr]]) -> dict[str, ast.expr] | None:
    if isinstance(value, ast.Dict):
        if not all(isinstance(k, ast.Constant) and isinstance(k.value, str) for k in value.keys):
            return None
        entries = {str(k.value): v for k, v in zip(value.keys, value.values) if isinstance(k, ast.Constant)}
    elif isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id == "dict":
        if len(value.args) > 1 or any(k.arg is None for k in value.keywords):
            return None
        base: dict[str, ast.expr] = {}
        if value.args:
            first = value.args[0]
            inner = known.get(first.id) if isinstance(first, ast.Name) else _dict_entries(first, known)
            if inner is None:
                return None
            base = dict(inner)
        entries = {**base, **{str(k.arg): k.value for k in value.keywords}}
    else:
        return None
    return {key: v for key, v in entries.items() if _writable_twice(v)}


def _writable_twice(value: ast.expr) -> bool:
    return all(isinstance(n, (ast.Constant, ast.Name, ast.Attribute, ast.Load, ast.UnaryOp, ast.USub, ast.Tuple,
                              ast.Subscript)) for n in ast.walk(value))


def applied_lambdas(program: Program) -> Iterator[Program]:
    """One variant: each ``(lambda a, b: E)(x, y)`` whose arguments are variables or constants as ``E`` with them
    written in (what a function inlined as a lambda leaves)."""

    class Apply(ast.NodeTransformer):
        def visit_Call(self, node: ast.Call) -> ast.AST:
            self.generic_visit(node)
            function = node.func
            if not isinstance(function, ast.Lambda) or node.keywords:
                return node
            params = function.args
            if (params.vararg or params.kwarg or params.kwonlyargs or params.posonlyargs or params.defaults
                    or len(params.args) != len(node.args)
                    or not all(isinstance(a, (ast.Name, ast.Constant)) for a in node.args)):
                return node
            values = {p.arg: a for p, a in zip(params.args, node.args)}

            class LambdaArguments(ast.NodeTransformer):
                def visit_Name(self, name: ast.Name) -> ast.AST:
                    return copy.deepcopy(values[name.id]) if name.id in values else name

                def visit_Lambda(self, inner: ast.Lambda) -> ast.AST:
                    return inner if {a.arg for a in inner.args.args} & set(values) else self.generic_visit(inner)

            body: ast.AST = LambdaArguments().visit(copy.deepcopy(function.body))
            return body

    out = program.copy()
    changed = Program(Apply().visit(out.tree))
    if changed.text != program.text:
        yield changed


def split_assignments(program: Program) -> Iterator[Program]:
    """One variant: each ``a, b = (x, y)`` as ``a = x`` and ``b = y`` (where ``y`` does not read ``a``), so each
    can go on its own."""

    class Split(ast.NodeTransformer):
        def visit_Assign(self, node: ast.Assign) -> ast.AST | list[ast.stmt]:
            target, value = node.targets[0], node.value
            if (len(node.targets) != 1 or not isinstance(target, (ast.Tuple, ast.List))
                    or not isinstance(value, (ast.Tuple, ast.List)) or len(target.elts) != len(value.elts)
                    or not all(isinstance(t, ast.Name) for t in target.elts)
                    or any(isinstance(v, ast.Starred) for v in value.elts)):
                return node
            names = [t.id for t in target.elts if isinstance(t, ast.Name)]
            if any(set(names[:k]) & names_in(v) for k, v in enumerate(value.elts)):
                return node
            return [carry(node, ast.Assign(targets=[ast.Name(n, ast.Store())], value=v))
                    for n, v in zip(names, value.elts)]

    out = program.copy()
    changed = Program(Split().visit(out.tree))
    if changed.text != program.text:
        yield changed


def printed_constants(program: Program) -> Iterator[Program]:
    """Each value a ``print`` writes (an argument, an f-string's field) as ``0``: the line keeps its shape (a
    number is masked as any other), and what only that value needed can go. The problem's own value stays
    only where it is the one judged."""
    for index, node in enumerate(ast.walk(program.tree)):
        if isinstance(node, ast.FormattedValue) and not isinstance(node.value, ast.Constant):
            yield _printed_zero(program, index)
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "print"):
            for argument in node.args:
                if not isinstance(argument, (ast.Constant, ast.JoinedStr, ast.Starred)):
                    yield _printed_zero(program, index, node.args.index(argument))


def _printed_zero(program: Program, index: int, argument: int | None = None) -> Program:
    out = program.copy()
    node = list(ast.walk(out.tree))[index]
    if isinstance(node, ast.FormattedValue):
        node.value = ast.Constant(0)
    elif isinstance(node, ast.Call) and argument is not None:
        node.args[argument] = ast.Constant(0)
    return Program(out.tree)


def class_defaults(program: Program) -> Iterator[Program]:
    """One variant: each attribute read of a settings class (a ``@dataclass`` or a plain class whose body only
    assigns values) written out: ``cfg.n`` as the ``n=`` the one ``cfg = Config(n=8)`` passed, else the
    class's default; ``Config.n`` as the default."""
    counts = binding_counts(program.tree)
    holders = {s.name: _defaults(s) for s in program.tree.body if isinstance(s, ast.ClassDef)}
    values: dict[str, dict[str, ast.expr]] = {name: d for name, d in holders.items() if d is not None}
    for node in ast.walk(program.tree):
        if (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)
                and counts.get(node.targets[0].id) == 1 and isinstance(node.value, ast.Call)
                and isinstance(node.value.func, ast.Name) and node.value.func.id in holders
                and holders[node.value.func.id] is not None and not node.value.args
                and all(k.arg for k in node.value.keywords)):
            given = {str(k.arg): k.value for k in node.value.keywords if _writable_twice(k.value)}
            values[node.targets[0].id] = {**(holders[node.value.func.id] or {}), **given}

    class SettingsRead(ast.NodeTransformer):
        def visit_Attribute(self, node: ast.Attribute) -> ast.AST:
            self.generic_visit(node)
            if (isinstance(node.ctx, ast.Load) and isinstance(node.value, ast.Name) and node.value.id in values
                    and node.attr in values[node.value.id]):
                return copy.deepcopy(values[node.value.id][node.attr])
            return node

    out = program.copy()
    changed = Program(SettingsRead().visit(out.tree))
    if changed.text != program.text:
        yield changed


def _defaults(cls: ast.ClassDef) -> dict[str, ast.expr] | None:
    """A settings class's defaults (None: the class does more than hold values, or one is not simple)."""
    if cls.bases or any(not _dataclass_decorator(d) for d in cls.decorator_list):
        return None
    found: dict[str, ast.expr] = {}
    for statement in cls.body:
        if isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant):
            continue
        if isinstance(statement, ast.AnnAssign) and isinstance(statement.target, ast.Name) and statement.value:
            target, value = statement.target.id, statement.value
        elif (isinstance(statement, ast.Assign) and len(statement.targets) == 1
              and isinstance(statement.targets[0], ast.Name)):
            target, value = statement.targets[0].id, statement.value
        else:
            return None
        if not _writable_twice(value):
            return None
        found[target] = value
    return found


def _dataclass_decorator(decorator: ast.expr) -> bool:
    called = decorator.func if isinstance(decorator, ast.Call) else decorator
    return (isinstance(called, ast.Name) and called.id == "dataclass"
            or isinstance(called, ast.Attribute) and called.attr == "dataclass")


def folded_fields(program: Program) -> Iterator[Program]:
    """One variant: each f-string field of a constant (``{0:.2f}``, as `printed_constants` leaves it) written
    into the string as it prints (``0.00``): the same line, read at a glance."""

    class Fold(ast.NodeTransformer):
        def visit_JoinedStr(self, node: ast.JoinedStr) -> ast.AST:
            parts: list[ast.expr] = []
            for value in node.values:
                text = _constant_field(value)
                if text is not None:
                    value = ast.Constant(text)
                if isinstance(value, ast.Constant) and parts and isinstance(parts[-1], ast.Constant):
                    parts[-1] = ast.Constant(str(parts[-1].value) + str(value.value))
                else:
                    parts.append(value)
            if len(parts) == 1 and isinstance(parts[0], ast.Constant):
                return ast.copy_location(parts[0], node)
            return ast.copy_location(ast.JoinedStr(parts), node)

    out = program.copy()
    changed = Program(Fold().visit(out.tree))
    if changed.text != program.text:
        yield changed


def _constant_field(value: ast.expr) -> str | None:
    """What a field of a constant number prints (None: not one, or a format the kit does not write itself)."""
    if not (isinstance(value, ast.FormattedValue) and isinstance(value.value, ast.Constant)
            and type(value.value.value) in (int, float) and value.conversion == -1):
        return None
    spec = value.format_spec
    if spec is None:
        return str(value.value.value)
    if isinstance(spec, ast.JoinedStr) and all(isinstance(v, ast.Constant) for v in spec.values):
        try:
            return format(value.value.value, "".join(str(v.value) for v in spec.values if isinstance(v, ast.Constant)))
        except ValueError:
            return None
    return None
