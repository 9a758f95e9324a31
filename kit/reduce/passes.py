"""The reductions that know Python and JAX: each gives a program's one-step smaller variants, in order.

Pure: no program runs here (`kit.reduce.search` tests the variants). Coarse first:

* `unwrapped`: a compound statement replaced by its body (``if __name__ == "__main__":``, a ``with``, a
  ``try``, a branch; a loop by one iteration: its variable set to the first value where the kit can say
  it, ``range(...)``'s start);
* `inlined_calls`: a call of the program's own function replaced by the function's body (its parameters
  assigned the arguments, its last ``return`` the call's value);
* `body_variants` (for ddmin, `kit.reduce.search`): a statement list with only some of its statements;
* `inlined_variables`: ``name = value`` dropped and ``value`` written where ``name`` was read;
* `without_unused`, `argparse_defaults`, `as_lambdas`, `imports_folded`: what nothing reads dropped, the
  command line's defaults read, one-line functions as lambdas, an alias import written out;
* expressions made simpler: `kit.reduce.expressions`.

`plausible` refuses, without running it, a variant that cannot be the program sought: one that does not
compile, reads a name nothing binds, or lost the ``--op`` statement.
"""

from __future__ import annotations

import ast
import builtins
import copy
import warnings
from collections import Counter
from typing import Iterator

from .flatten import binding_counts, inlined_calls  # noqa: F401 (one of the passes, built there)
from .program import Program, bodies, marked

MAX_USES_INLINED = 3
"""A variable read more often than this stays: its value written out each time reads worse than the name."""


def plausible(program: Program, need_mark: bool) -> bool:
    """Could this variant be the program sought? (It compiles, every name it reads is bound, the op is kept.)"""
    if need_mark and not program.has_mark:
        return False
    try:
        with warnings.catch_warnings():  # a candidate's oddities ("'int' object is not callable") are its own
            warnings.simplefilter("ignore")
            compile(program.text, "<candidate>", "exec")
    except (SyntaxError, ValueError):
        return False
    return not unbound_names(program.tree)


def unbound_names(tree: ast.Module) -> set[str]:
    """The names read and bound nowhere in the program (nor builtins); empty where a star import hides them."""
    bound: set[str] = set(dir(builtins)) | {"__file__", "__name__"}
    read: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            (read if isinstance(node.ctx, ast.Load) else bound).add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(node.name)
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            if any(alias.name == "*" for alias in node.names):
                return set()
            bound |= {(alias.asname or alias.name).split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ExceptHandler) and node.name:
            bound.add(node.name)
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            bound |= set(node.names)
    return read - bound


def _bodies(tree: ast.AST) -> list[tuple[ast.AST, str]]:
    return list(bodies(tree))


def with_body(program: Program, which: int, statements: list[ast.stmt]) -> Program:
    """A copy of ``program`` whose ``which``-th statement list (`program.bodies` order) is ``statements``."""
    out = program.copy()
    owner, name = _bodies(out.tree)[which]
    setattr(owner, name, [copy.deepcopy(s) for s in statements] or ([] if name != "body" else [ast.Pass()]))
    return out


def body_count(program: Program) -> int:
    return len(_bodies(program.tree))


def body_at(program: Program, which: int) -> list[ast.stmt]:
    owner, name = _bodies(program.tree)[which]
    value = getattr(owner, name)
    return list(value) if isinstance(value, list) else []


def _spliced(program: Program, which: int, at: int, replacement: list[ast.stmt]) -> Program:
    statements = body_at(program, which)
    return with_body(program, which, statements[:at] + replacement + statements[at + 1:])


def unwrapped(program: Program) -> Iterator[Program]:
    """Each compound statement replaced by what it runs once (see the module's docstring)."""
    for which in range(body_count(program)):
        for at, statement in enumerate(body_at(program, which)):
            for replacement in _unwrappings(statement):
                if replacement:
                    yield _spliced(program, which, at, replacement)


def _unwrappings(statement: ast.stmt) -> list[list[ast.stmt]]:
    if isinstance(statement, ast.If):
        return [statement.body, statement.orelse]
    if isinstance(statement, (ast.With, ast.AsyncWith)):  # what ``as`` named is still bound
        bound: list[ast.stmt] = [ast.Assign(targets=[item.optional_vars], value=item.context_expr)
                                 for item in statement.items if item.optional_vars is not None]
        return [bound + statement.body]
    if isinstance(statement, ast.Try):
        return [statement.body + statement.finalbody]
    if isinstance(statement, ast.While):
        return [statement.body]
    if isinstance(statement, ast.For):
        first = _first_value(statement.iter)
        start = [ast.Assign(targets=[statement.target], value=first)] if first is not None else []
        # The last value too: what a program prints after its loop is often of the last iteration.
        last = _last_value(statement.iter)
        ends = [[ast.Assign(targets=[statement.target], value=last)] + statement.body] if last is not None else []
        return [start + statement.body] + ends
    return []


def _first_value(iterable: ast.expr) -> ast.expr | None:
    """The first value a loop over ``iterable`` takes, where the kit can write it: ``range``'s start, a literal's
    first element, else ``next(iter(...))``."""
    if isinstance(iterable, ast.Call) and isinstance(iterable.func, ast.Name) and iterable.func.id == "range":
        return iterable.args[0] if len(iterable.args) >= 2 else ast.Constant(0)
    if isinstance(iterable, (ast.List, ast.Tuple)) and iterable.elts and not isinstance(iterable.elts[0], ast.Starred):
        return iterable.elts[0]
    return ast.Call(ast.Name("next", ast.Load()), [ast.Call(ast.Name("iter", ast.Load()), [iterable], [])], [])


def _last_value(iterable: ast.expr) -> ast.expr | None:
    """The last value a loop over ``iterable`` takes, where the kit can write it without running the loop:
    ``range(...)[-1]``, a literal's last element (never an iterator listed: it may not end)."""
    if isinstance(iterable, ast.Call) and isinstance(iterable.func, ast.Name) and iterable.func.id == "range":
        return ast.Subscript(copy.deepcopy(iterable), ast.UnaryOp(ast.USub(), ast.Constant(1)), ast.Load())
    if isinstance(iterable, (ast.List, ast.Tuple)) and iterable.elts and not isinstance(iterable.elts[-1], ast.Starred):
        return iterable.elts[-1]
    return None


def _names(target: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(target) if isinstance(n, ast.Name)}


def _read_names(statements: list[ast.stmt]) -> set[str]:
    return {n.id for s in statements for n in ast.walk(s) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}


def without_unused(program: Program) -> Iterator[Program]:
    """One variant: every definition nothing reads dropped (a function, a class, an import, an assignment), again
    until none is left; a statement holding the op is kept."""
    out = program.copy()
    while True:
        loads = Counter(n.id for n in ast.walk(out.tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load))
        read = set(loads) | {n.attr for n in ast.walk(out.tree) if isinstance(n, ast.Attribute)}  # a module's attribute
        dropped = False
        for owner, name in list(bodies(out.tree)):
            statements = getattr(owner, name)
            in_class = isinstance(owner, ast.ClassDef)
            kept = [s for s in statements if marked(s) or not _unused(s, read, in_class, loads)]
            if len(kept) < len(statements):
                setattr(owner, name, kept or [ast.Pass()])
                dropped = True
        if not dropped:
            break
        out = Program(out.tree)
    if out.text != program.text:
        yield out


def _unused(statement: ast.stmt, read: set[str], in_class: bool = False, loads: Counter[str] | None = None) -> bool:
    if isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant):
        return True  # a docstring, a bare constant: nothing runs
    if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        # A method Python calls itself (``__init__``, ``__call__``) is read by no name.
        return statement.name not in read and not (in_class and statement.name.startswith("__"))
    if (isinstance(statement, ast.Assign) and len(statement.targets) == 1 and isinstance(statement.value, ast.Name)
            and isinstance(statement.targets[0], ast.Name) and statement.targets[0].id == statement.value.id):
        return True  # ``loss = loss``: nothing happens
    if isinstance(statement, ast.Assign) and _made_bare(statement.value):
        return all(isinstance(t, ast.Name) and t.id not in read for t in statement.targets)
    if isinstance(statement, (ast.Import, ast.ImportFrom)):
        return all((alias.asname or alias.name).split(".")[0] not in read for alias in statement.names)
    if isinstance(statement, ast.Assign) and all(_pure_call(n) for n in ast.walk(statement.value)
                                                 if isinstance(n, ast.Call)):
        # A name its own value reads (``key, sub = split(key)``) is read by nothing else where that is all.
        own = Counter(n.id for n in ast.walk(statement.value) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load))
        elsewhere = read if loads is None else {n for n in read if loads.get(n, 0) > own.get(n, 0) or n not in loads}
        return all(isinstance(t, (ast.Name, ast.Tuple, ast.List)) and not _names(t) & elsewhere
                   for t in statement.targets)
    return False


PURE_BUILTINS = {"dict", "list", "tuple", "set", "frozenset", "range", "len", "int", "float", "str", "bool"}
"""Calls that make a value and do nothing else: an assignment of what only they make, read by nothing, can go."""


PURE_KEYS = {"PRNGKey", "key", "split", "fold_in"}
"""``jax.random``'s key makers: a key nothing reads, or the ``split`` chain of a draw that is gone, can go."""


def _pure_call(call: ast.Call) -> bool:
    if isinstance(call.func, ast.Attribute) and call.func.attr in PURE_KEYS:
        return isinstance(call.func.value, (ast.Name, ast.Attribute)) and ast.unparse(call.func.value).endswith(
            ("jax.random", "jr", "random"))
    return isinstance(call.func, ast.Name) and call.func.id in PURE_BUILTINS


def _made_bare(value: ast.expr) -> bool:
    """``Class.__new__(Class)``: an object an inlined constructor made, nothing run."""
    return isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr == "__new__"


def argparse_defaults(program: Program) -> Iterator[Program]:
    """One variant: each ``args.NAME`` of ``args = parser.parse_args()`` replaced by that option's default (the
    program as run without arguments)."""
    defaults: dict[str, ast.expr] = {}
    holders: set[str] = set()
    for node in ast.walk(program.tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "add_argument":
            flags = [a.value for a in node.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
            keywords = {k.arg: k.value for k in node.keywords if k.arg}
            dest = keywords.get("dest")
            name = (dest.value if isinstance(dest, ast.Constant) and isinstance(dest.value, str) else
                    next((f.lstrip("-") for f in flags if f.startswith("--")), flags[0] if flags else ""))
            action = keywords.get("action")
            flag_default = ast.Constant(isinstance(action, ast.Constant) and action.value == "store_false")
            default = keywords.get("default", flag_default if action is not None else ast.Constant(None))
            defaults[name.replace("-", "_")] = default
        elif (isinstance(node, ast.Assign) and isinstance(node.value, ast.Call)
              and isinstance(node.value.func, ast.Attribute) and node.value.func.attr in ("parse_args",
                                                                                        "parse_known_args")):
            holders |= {t.id for t in node.targets if isinstance(t, ast.Name)}
    if not defaults or not holders:
        return

    class Defaults(ast.NodeTransformer):
        def visit_Attribute(self, node: ast.Attribute) -> ast.expr:
            if isinstance(node.value, ast.Name) and node.value.id in holders and node.attr in defaults:
                return copy.deepcopy(defaults[node.attr])
            self.generic_visit(node)
            return node

    out = program.copy()
    out.tree = Defaults().visit(out.tree)
    read = {n.id for n in ast.walk(out.tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
    for owner, name in list(bodies(out.tree)):  # the parser itself, once nothing reads what it parsed
        kept = [s for s in getattr(owner, name) if not _parser_statement(s, holders - read)]
        setattr(owner, name, kept or [ast.Pass()])
    changed = Program(out.tree)
    if changed.text != program.text:
        yield changed


def _parser_statement(statement: ast.stmt, unread: set[str]) -> bool:
    """A statement that builds or runs an ``argparse`` parser whose result nothing reads any more."""
    if not isinstance(statement, (ast.Expr, ast.Assign)) or not unread:
        return False
    calls = {n.func.attr for n in ast.walk(statement.value) if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)}
    return bool(calls & {"ArgumentParser", "add_argument", "parse_args", "parse_known_args"}) and calls <= {
        "ArgumentParser", "add_argument", "parse_args", "parse_known_args", "add_argument_group",
        "add_mutually_exclusive_group"}


def inlined_variables(program: Program) -> Iterator[Program]:
    """Each ``name = value`` bound once and read a few times: dropped, ``value`` written where it was read. A
    module's name is counted outside the functions that bind the same name as their own (a parameter ``x`` does
    not keep a module's ``x = (1,)`` from being inlined); ``x = value`` then ``return x`` is ``return value``."""
    for which in range(body_count(program)):
        statements = body_at(program, which)
        at_module = which == 0 and isinstance(program.tree, ast.Module)
        for at, statement in enumerate(statements):
            if not (isinstance(statement, ast.Assign) and len(statement.targets) == 1
                    and isinstance(statement.targets[0], ast.Name)) or marked(statement):
                continue
            name = statement.targets[0].id
            if _returned_next(statements, at, name) and not at_module:
                returned = ast.Return(value=statement.value)
                yield with_body(program, which, statements[:at] + [returned] + statements[at + 2:])
                continue
            seen = list(_outside(program.tree, _shadowing(program.tree, name) if at_module else set()))
            stores = binding_counts(ast.Module(body=[], type_ignores=[]), seen)  # a def, a parameter bind it too
            uses = sum(1 for node in seen if isinstance(node, ast.Name) and node.id == name
                       and isinstance(node.ctx, ast.Load))
            if stores.get(name) == 1 and 1 <= uses and (uses <= MAX_USES_INLINED or _simple(statement.value)):
                yield _substituted(program, which, at, name, at_module)


def _returned_next(statements: list[ast.stmt], at: int, name: str) -> bool:
    following = statements[at + 1] if at + 1 < len(statements) else None
    return (isinstance(following, ast.Return) and isinstance(following.value, ast.Name)
            and following.value.id == name and not marked(following)
            and not any(isinstance(n, (ast.Global, ast.Nonlocal)) and name in n.names for n in statements))


def _shadowing(tree: ast.AST, name: str) -> set[int]:
    """The functions and lambdas (their ids) that bind ``name`` as their own: there it is not the module's."""
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            inside = [*ast.walk(node.args), *(n for part in _parts(node) for n in ast.walk(part))]
            if any(isinstance(n, (ast.Global, ast.Nonlocal)) and name in n.names for n in inside):
                continue
            if any(isinstance(n, ast.arg) and n.arg == name or isinstance(n, ast.Name) and n.id == name
                   and not isinstance(n.ctx, ast.Load) for n in inside):
                out.add(id(node))
    return out


def _parts(node: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda) -> list[ast.AST]:
    return [node.body] if isinstance(node, ast.Lambda) else list(node.body)


def _outside(node: ast.AST, shadowing: set[int]) -> Iterator[ast.AST]:
    """Every node of ``node`` but the parameters and bodies of the ``shadowing`` functions (their decorators
    and defaults are the module's)."""
    yield node
    if id(node) in shadowing:
        assert isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
        outer: list[ast.AST] = [*getattr(node, "decorator_list", []), *node.args.defaults,
                                *(d for d in node.args.kw_defaults if d is not None)]
        for child in outer:
            yield from _outside(child, shadowing)
        return
    for child in ast.iter_child_nodes(node):
        yield from _outside(child, shadowing)


def _simple(value: ast.expr) -> bool:
    """A constant, a name or a module's attribute, or a tuple of them: written out anywhere, it reads as well."""
    return all(isinstance(n, (ast.Constant, ast.Name, ast.Attribute, ast.Tuple, ast.Load, ast.UnaryOp, ast.USub))
               for n in ast.walk(value))


def as_lambdas(program: Program) -> Iterator[Program]:
    """Each ``def f(...): return EXPR`` as ``f = lambda ...: EXPR`` (then inlined where it is passed)."""
    for which in range(body_count(program)):
        for at, statement in enumerate(body_at(program, which)):
            if (isinstance(statement, ast.FunctionDef) and not statement.decorator_list and len(statement.body) == 1
                    and isinstance(statement.body[0], ast.Return) and statement.body[0].value is not None
                    and not marked(statement.body[0])):
                function = ast.Lambda(args=statement.args, body=statement.body[0].value)
                yield _spliced(program, which, at, [ast.Assign(targets=[ast.Name(statement.name, ast.Store())],
                                                               value=function)])


def imports_folded(program: Program) -> Iterator[Program]:
    """Each ``import a.b as c`` or ``from a.b import c`` dropped where ``import a`` is there, its names written
    out (``c.f`` as ``a.b.f``): one statement less where the package imports its parts itself, as jax does."""
    top = {alias.name for node in program.tree.body if isinstance(node, ast.Import) for alias in node.names
           if alias.asname is None and "." not in alias.name}
    for which in range(body_count(program)):
        for at, statement in enumerate(body_at(program, which)):
            renames = _import_renames(statement, top)
            if renames:
                yield _renamed(_spliced(program, which, at, []), renames)


def _import_renames(statement: ast.stmt, top: set[str]) -> dict[str, str]:
    if isinstance(statement, ast.Import) and all(a.asname and a.name.split(".")[0] in top for a in statement.names):
        return {str(a.asname): a.name for a in statement.names}
    if (isinstance(statement, ast.ImportFrom) and statement.module and not statement.level
            and statement.module.split(".")[0] in top and all(a.name != "*" for a in statement.names)):
        return {a.asname or a.name: f"{statement.module}.{a.name}" for a in statement.names}
    return {}


def _renamed(program: Program, renames: dict[str, str]) -> Program:
    class Rename(ast.NodeTransformer):
        def visit_Name(self, node: ast.Name) -> ast.expr:
            if node.id in renames and isinstance(node.ctx, ast.Load):
                return ast.parse(renames[node.id], mode="eval").body
            return node

    return Program(Rename().visit(program.tree))


def _substituted(program: Program, which: int, at: int, name: str, at_module: bool = False) -> Program:
    out = _spliced(program, which, at, [])
    assignment = body_at(program, which)[at]
    assert isinstance(assignment, ast.Assign)
    value: ast.expr = assignment.value
    reads = {id(node) for node in _outside(out.tree, _shadowing(out.tree, name) if at_module else set())}

    class Substitute(ast.NodeTransformer):
        def visit_Name(self, node: ast.Name) -> ast.expr:
            if node.id == name and isinstance(node.ctx, ast.Load) and id(node) in reads:
                return copy.deepcopy(value)
            return node

    out.tree = Substitute().visit(out.tree)
    return out
