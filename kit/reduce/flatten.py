"""The passes that take a program's structure apart: calls inlined wherever they are, objects as plain variables.

Pure: no program runs here (`kit.reduce.search` judges the variants). What a user's program is built of, and
what a reproducer is not:

* `inlined_calls`: a call of the program's own function, or of a method of its own class (``self.f(x)``,
  ``model.f(x)``, ``Class.f(x)``), anywhere in a statement, replaced by the function's body before the
  statement and its returned value in the call's place; a constructor ``v = Class(...)`` by
  ``v = Class.__new__(Class)`` and ``__init__``'s body. A parameter passed a variable takes that variable's
  name, so no ``p = p`` is left.
* `attributes_as_names`: an object made by an inlined constructor, used only through its attributes
  (``pop.freq``), as one variable per attribute (``freq``).
* `methods_as_functions`: a method read through one variable (passed to ``jax.jit``) as a function of the
  module.

The smaller rewrites that free these (a decorator dropped, a config dictionary read): `kit.reduce.rewrites`.
"""

from __future__ import annotations

import ast
import copy
from typing import Iterable, Iterator

from .program import Program, bodies, carry

NEW = "__new__"


def body_lists(tree: ast.AST) -> list[tuple[ast.AST, str]]:
    return list(bodies(tree))


def binding_counts(tree: ast.AST, nodes: Iterable[ast.AST] | None = None) -> dict[str, int]:
    """How often each name is bound anywhere (assigned, a parameter, a def, a class, an import, a loop's variable);
    among ``nodes`` only, where given."""
    counts: dict[str, int] = {}

    def bound(name: str, times: int = 1) -> None:
        counts[name] = counts.get(name, 0) + times

    for node in ast.walk(tree) if nodes is None else nodes:
        if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            bound(node.id)
        elif isinstance(node, ast.arg):
            bound(node.arg, 2)  # a parameter is bound at every call
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:
                bound((alias.asname or alias.name).split(".")[0])
        elif isinstance(node, ast.ExceptHandler) and node.name:
            bound(node.name)
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            for name in node.names:
                bound(name, 2)
    return counts


def names_in(nodes: list[ast.stmt] | ast.AST) -> set[str]:
    roots = nodes if isinstance(nodes, list) else [nodes]
    out: set[str] = set()
    for root in roots:
        for node in ast.walk(root):
            if isinstance(node, ast.Name):
                out.add(node.id)
            elif isinstance(node, ast.arg):
                out.add(node.arg)
            elif isinstance(node, (ast.FunctionDef, ast.ClassDef)):
                out.add(node.name)
    return out


def _stored_in(statements: list[ast.stmt]) -> set[str]:
    return {n.id for s in statements for n in ast.walk(s) if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load)}


def inlinable(function: ast.FunctionDef, decorators_allowed: tuple[str, ...] = ()) -> bool:
    """A function whose body can stand in for a call: plain parameters, one ``return`` at its end (or none),
    no ``yield``, ``global`` or recursion."""
    arguments = function.args
    if any(not (isinstance(d, ast.Name) and d.id in decorators_allowed) for d in function.decorator_list):
        return False
    if arguments.vararg or arguments.kwarg or arguments.kwonlyargs or arguments.posonlyargs:
        return False
    returns = [n for n in _own_nodes(function) if isinstance(n, ast.Return)]
    last_returns = isinstance(function.body[-1], ast.Return)
    nested = any(isinstance(n, (ast.Yield, ast.YieldFrom, ast.Global, ast.Nonlocal, ast.Await))
                 or isinstance(n, ast.Name) and n.id == function.name for n in ast.walk(function))
    return not nested and len(returns) == (1 if last_returns else 0)


def _own_nodes(function: ast.FunctionDef) -> Iterator[ast.AST]:
    """The nodes of ``function``'s body, those of the functions and classes it defines left out."""
    pending: list[ast.AST] = list(function.body)
    while pending:
        node = pending.pop()
        yield node
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            pending.extend(ast.iter_child_nodes(node))


class Callees:
    """The program's own functions and classes a call may be replaced by: module-level functions, and methods
    whose name no other class of the program uses (so ``x.f(...)`` says which)."""

    def __init__(self, tree: ast.Module) -> None:
        self.functions = {s.name: s for s in tree.body if isinstance(s, ast.FunctionDef) and inlinable(s)}
        self.classes = {s.name: s for s in tree.body if isinstance(s, ast.ClassDef) and not s.bases
                        and not s.decorator_list}
        seen: dict[str, list[tuple[ast.ClassDef, ast.FunctionDef]]] = {}
        for cls in self.classes.values():
            for item in cls.body:
                if isinstance(item, ast.FunctionDef):
                    seen.setdefault(item.name, []).append((cls, item))
        self.methods = {name: found[0] for name, found in seen.items()
                        if len(found) == 1 and inlinable(found[0][1], ("staticmethod",))}

    def target(self, call: ast.Call) -> tuple[ast.FunctionDef, str | None] | None:
        """The function a call runs and the variable ``self`` is (None: a plain function or a static method)."""
        func = call.func
        if isinstance(func, ast.Name) and func.id in self.functions:
            return self.functions[func.id], None
        if isinstance(func, ast.Attribute) and func.attr in self.methods and func.attr != "__init__":
            cls, method = self.methods[func.attr]
            static = any(isinstance(d, ast.Name) and d.id == "staticmethod" for d in method.decorator_list)
            if static:
                return method, None
            if isinstance(func.value, ast.Name) and func.value.id not in self.classes:
                return method, func.value.id
        return None

    def constructor(self, statement: ast.stmt) -> tuple[ast.ClassDef, ast.FunctionDef, str] | None:
        """``v = Class(...)`` of a class of the program whose ``__init__`` can be inlined."""
        if not (isinstance(statement, ast.Assign) and len(statement.targets) == 1
                and isinstance(statement.targets[0], ast.Name) and isinstance(statement.value, ast.Call)
                and isinstance(statement.value.func, ast.Name) and statement.value.func.id in self.classes):
            return None
        cls = self.classes[statement.value.func.id]
        init = next((s for s in cls.body if isinstance(s, ast.FunctionDef) and s.name == "__init__"), None)
        if init is None or not inlinable(init) or init.body and isinstance(init.body[-1], ast.Return):
            return None
        return cls, init, statement.targets[0].id


def _evaluated_calls(statement: ast.stmt) -> list[ast.Call]:
    """The calls a simple statement always makes, innermost first (none under a lambda, a comprehension, a
    short-circuit's later operand or a conditional expression's branch)."""
    if not isinstance(statement, (ast.Expr, ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Return)):
        return []
    found: list[ast.Call] = []

    def visit(node: ast.AST) -> None:
        if isinstance(node, (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
            return
        if isinstance(node, ast.BoolOp):
            visit(node.values[0])
            return
        if isinstance(node, ast.IfExp):
            visit(node.test)
            return
        for child in ast.iter_child_nodes(node):
            visit(child)
        if isinstance(node, ast.Call):
            found.append(node)

    visit(statement)
    return found


def _bound_parameters(function: ast.FunctionDef, call: ast.Call, skip_self: bool) -> dict[str, ast.expr] | None:
    params = [a.arg for a in function.args.args][1 if skip_self else 0:]
    defaults = dict(zip(params[len(params) - len(function.args.defaults):], function.args.defaults))
    if len(call.args) > len(params) or any(isinstance(a, ast.Starred) for a in call.args):
        return None
    given: dict[str, ast.expr] = dict(zip(params, call.args))
    for keyword in call.keywords:
        if keyword.arg is None or keyword.arg not in params or keyword.arg in given:
            return None
        given[keyword.arg] = keyword.value
    values: dict[str, ast.expr] = {}
    for name in params:
        value = given.get(name, defaults.get(name))
        if value is None:
            return None
        values[name] = value
    return values


def _renamed(statements: list[ast.stmt], renames: dict[str, str]) -> list[ast.stmt]:
    class NameRenamer(ast.NodeTransformer):
        def visit_Name(self, node: ast.Name) -> ast.AST:
            if node.id in renames:
                return ast.copy_location(ast.Name(renames[node.id], node.ctx), node)
            return node

    return [NameRenamer().visit(s) for s in statements]


def inlined_body(function: ast.FunctionDef, call: ast.Call, self_name: str | None) -> tuple[list[ast.stmt], ast.expr] | None:
    """The statements that stand in for ``call`` and the expression its value is (None: it cannot be inlined)."""
    values = _bound_parameters(function, call, self_name is not None)
    if values is None:
        return None
    body: list[ast.stmt] = copy.deepcopy(function.body)
    result: ast.expr = ast.Constant(None)
    if body and isinstance(body[-1], ast.Return):
        last = body.pop()
        assert isinstance(last, ast.Return)
        result = last.value if last.value is not None else ast.Constant(None)
    holder = ast.Expr(result)
    stored, used = _stored_in(body), names_in(body + [holder])
    renames: dict[str, str] = {}
    if self_name is not None:
        renames[function.args.args[0].arg] = self_name
    start: list[ast.stmt] = []
    for name, value in values.items():
        if isinstance(value, ast.Name) and value.id == name:
            continue  # the caller's variable of the same name: nothing to bind
        if isinstance(value, ast.Name) and name not in stored and value.id not in used:
            renames[name] = value.id  # the caller's variable itself: no ``p = p``
        else:
            start.append(ast.Assign(targets=[ast.Name(name, ast.Store())], value=copy.deepcopy(value)))
    body = _renamed(body + [holder], renames) if renames else body + [holder]
    final = body.pop()
    assert isinstance(final, ast.Expr)
    return start + body, final.value


def _replace_node(statement: ast.stmt, old: ast.AST, new: ast.AST) -> ast.stmt:
    """A copy of ``statement`` with the node ``old`` (found by identity in the original) as ``new``."""
    order = list(ast.walk(statement))
    at = next(i for i, node in enumerate(order) if node is old)
    out = copy.deepcopy(statement)
    target = list(ast.walk(out))[at]
    for parent in ast.walk(out):
        for name, value in ast.iter_fields(parent):
            if value is target:
                setattr(parent, name, new)
                return out
            if isinstance(value, list) and any(item is target for item in value):
                setattr(parent, name, [new if item is target else item for item in value])
                return out
    return out


def spliced(program: Program, which: int, at: int, replacement: list[ast.stmt]) -> Program:
    out = program.copy()
    owner, name = body_lists(out.tree)[which]
    statements = getattr(owner, name)
    setattr(owner, name, statements[:at] + replacement + statements[at + 1:] or [ast.Pass()])
    return Program(out.tree)


def _call_replaced(statement: ast.stmt, call: ast.Call, result: ast.expr) -> list[ast.stmt]:
    if isinstance(statement, ast.Expr) and statement.value is call:
        return [] if isinstance(result, (ast.Constant, ast.Name)) else [carry(statement, ast.Expr(result))]
    if (isinstance(statement, ast.Assign) and statement.value is call and len(statement.targets) == 1
            and isinstance(statement.targets[0], ast.Name) and isinstance(result, ast.Name)
            and statement.targets[0].id == result.id):
        return []  # ``generation = generation``
    return [carry(statement, _replace_node(statement, call, result))]


def inlined_calls(program: Program) -> Iterator[Program]:
    """Each call of the program's own function or method, or a constructor, as its body (module docstring)."""
    callees = Callees(program.tree)
    for which, (owner, name) in enumerate(body_lists(program.tree)):
        for at, statement in enumerate(list(getattr(owner, name))):
            built = callees.constructor(statement)
            if built is not None:
                yield _constructed(program, which, at, statement, built)
            for call in _evaluated_calls(statement):
                found = callees.target(call)
                if found is None:
                    continue
                inlined = inlined_body(found[0], call, found[1])
                if inlined is not None:
                    body, result = inlined
                    yield _without_unread_defs(spliced(program, which, at, body + _call_replaced(statement, call, result)))


def _constructed(program: Program, which: int, at: int, statement: ast.stmt,
                 built: tuple[ast.ClassDef, ast.FunctionDef, str]) -> Program:
    cls, init, variable = built
    assert isinstance(statement, ast.Assign) and isinstance(statement.value, ast.Call)
    made = ast.parse(f"{variable} = {cls.name}.{NEW}({cls.name})").body[0]
    inlined = inlined_body(init, statement.value, variable)
    if inlined is None:
        return program
    return spliced(program, which, at, [carry(statement, made)] + inlined[0])


def _without_unread_defs(program: Program) -> Program:
    """The module's functions that nothing reads any more dropped (the one just inlined, usually)."""
    read = {n.id for n in ast.walk(program.tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
    kept = [s for s in program.tree.body if not (isinstance(s, ast.FunctionDef) and s.name not in read)]
    if len(kept) == len(program.tree.body):
        return program
    out = program.copy()
    out.tree.body = [s for s in out.tree.body if not (isinstance(s, ast.FunctionDef) and s.name not in read)]
    return Program(out.tree)


def attributes_as_names(program: Program) -> Iterator[Program]:
    """Each object made by ``v = Class.__new__(Class)`` and used only through its attributes, as variables."""
    counts = binding_counts(program.tree)
    methods = {item.name for cls in ast.walk(program.tree) if isinstance(cls, ast.ClassDef)
               for item in cls.body if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef))}
    for which, (owner, name) in enumerate(body_lists(program.tree)):
        for at, statement in enumerate(getattr(owner, name)):
            variable = _made_object(statement)
            if variable is None or counts.get(variable) != 1:
                continue
            uses = [n for n in ast.walk(program.tree) if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name)
                    and n.value.id == variable]
            if any(use.attr in methods for use in uses):
                continue  # a method still called: inlined first
            every = sum(1 for n in ast.walk(program.tree) if isinstance(n, ast.Name) and n.id == variable)
            if every != len(uses) + 1:
                continue  # the object itself is passed on or read whole
            renames = {use.attr: use.attr if use.attr not in counts else f"{variable}_{use.attr}" for use in uses}
            yield _attributes_renamed(spliced(program, which, at, []), variable, renames)


def _made_object(statement: ast.stmt) -> str | None:
    if (isinstance(statement, ast.Assign) and len(statement.targets) == 1 and isinstance(statement.targets[0], ast.Name)
            and isinstance(statement.value, ast.Call) and isinstance(statement.value.func, ast.Attribute)
            and statement.value.func.attr == NEW):
        return statement.targets[0].id
    return None


def _attributes_renamed(program: Program, variable: str, renames: dict[str, str]) -> Program:
    class AttributesAsNames(ast.NodeTransformer):
        def visit_Attribute(self, node: ast.Attribute) -> ast.AST:
            if isinstance(node.value, ast.Name) and node.value.id == variable and node.attr in renames:
                return ast.copy_location(ast.Name(renames[node.attr], node.ctx), node)
            self.generic_visit(node)
            return node

    out = program.copy()
    return Program(AttributesAsNames().visit(out.tree))


def methods_as_functions(program: Program) -> Iterator[Program]:
    """Each method read only through one variable (``model.f``, passed to ``jax.jit``) or through its class
    (``Class.f``, a static method) as a function of the module: ``self`` is that variable, the class is left
    with less, and the object can become plain variables (`attributes_as_names`)."""
    counts = binding_counts(program.tree)
    module_names = {n.id for s in program.tree.body if not isinstance(s, (ast.FunctionDef, ast.ClassDef))
                    for n in ast.walk(s) if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load)}
    for at, cls in enumerate(program.tree.body):
        if not isinstance(cls, ast.ClassDef):
            continue
        for method in cls.body:
            if not isinstance(method, ast.FunctionDef) or method.name.startswith("__") or counts.get(method.name) != 1:
                continue
            receivers = {n.value.id for n in ast.walk(program.tree) if isinstance(n, ast.Attribute)
                         and n.attr == method.name and isinstance(n.value, ast.Name)}
            static = any(isinstance(d, ast.Name) and d.id == "staticmethod" for d in method.decorator_list)
            if len(receivers) != 1 or (next(iter(receivers)) == cls.name) != static or not static and not method.args.args:
                continue
            if not static and next(iter(receivers)) not in module_names:
                continue  # ``self.f`` inside another method: the object is no variable of the module
            yield _method_moved(program, at, method, next(iter(receivers)), static)


def _method_moved(program: Program, at: int, method: ast.FunctionDef, receiver: str, static: bool) -> Program:
    function = copy.deepcopy(method)
    function.decorator_list = [d for d in function.decorator_list if not (isinstance(d, ast.Name) and d.id == "staticmethod")]
    if not static:
        self_name = function.args.args[0].arg
        function.args.args = function.args.args[1:]
        function.body = _renamed(function.body, {self_name: receiver})
    out = program.copy()
    cls = out.tree.body[at]
    assert isinstance(cls, ast.ClassDef)
    cls.body = [s for s in cls.body if not (isinstance(s, ast.FunctionDef) and s.name == method.name)] or [ast.Pass()]

    class MethodReads(ast.NodeTransformer):
        def visit_Attribute(self, node: ast.Attribute) -> ast.AST:
            if node.attr == method.name and isinstance(node.value, ast.Name) and node.value.id == receiver:
                return ast.copy_location(ast.Name(method.name, ast.Load()), node)
            self.generic_visit(node)
            return node

    tree = MethodReads().visit(out.tree)
    tree.body.insert(at + 1, function)
    return Program(tree)
