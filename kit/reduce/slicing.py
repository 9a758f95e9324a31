"""The statements the op's line needs, and nothing else: one variant, where ``--op`` marks a statement.

Pure (nothing runs here). First, where the op is in a function, that function ended at the op (returning
what it assigned). Then kept: the module's statement that holds the op; where that is a function, the
first statement that reads the function's name (a call, ``jax.jit(f)``); then, again and again, for each
kept statement the statements before it that bind a name it reads (an import, an assignment, a setting of
the environment, a definition). What prints, times or checks something else goes in one run instead of a
ddmin's dozens: each ``--op`` run compiles and dumps, seconds apiece.
"""

from __future__ import annotations

import ast
import copy
from typing import Iterator

from .program import Program, marked

MAX_READERS = 3
"""The function's readers tried, each as one variant: the first is usually the call that compiles it."""


def sliced(program: Program) -> Iterator[Program]:
    """The program cut to what the marked statement needs (see the module's docstring), once per reader tried."""
    body = program.tree.body
    holder = next((at for at, s in enumerate(body) if any(marked(n) for n in ast.walk(s))), None)
    if holder is None:
        return
    seeds: list[set[int]] = [{holder}]
    statement = body[holder]
    if isinstance(statement, (ast.FunctionDef, ast.ClassDef)):
        readers = [at for at, s in enumerate(body) if at != holder and statement.name in _read(s)]
        seeds = [{holder, reader} for reader in readers[:MAX_READERS]]
    cut = _returning_the_op(statement) if isinstance(statement, ast.FunctionDef) else None
    if cut is not None:
        out = program.copy()
        out.tree.body[holder] = cut
        yield Program(out.tree)
    for seed in seeds:
        kept = _needed(body, seed)
        if len(kept) < len(body):
            out = program.copy()
            out.tree.body = [s for at, s in enumerate(out.tree.body) if at in kept]
            yield Program(out.tree)


def _needed(body: list[ast.stmt], seed: set[int]) -> set[int]:
    kept = set(seed)
    pending = sorted(seed)
    while pending:
        at = pending.pop()
        for name in _read(body[at]):
            for before in range(min(at, len(body)) - 1, -1, -1) if at < len(body) else []:
                if name in _bound(body[before]):
                    if before not in kept:
                        kept.add(before)
                        pending.append(before)
                    if not _augments(body[before], name):
                        break  # the binding this statement reads; earlier ones are overwritten
        for before in range(at):  # the environment set before JAX starts (XLA_FLAGS) is read by no name
            if before not in kept and _sets_environment(body[before]):
                kept.add(before)
                pending.append(before)
    return kept


def _read(statement: ast.stmt) -> set[str]:
    names = {n.id for n in ast.walk(statement) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
    return names | {n.value.id for n in ast.walk(statement) if isinstance(n, ast.Attribute)
                    and isinstance(n.value, ast.Name) and not isinstance(n.ctx, ast.Load)}


def _bound(statement: ast.stmt) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(statement):
        if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            names.add(node.id)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names |= {(a.asname or a.name).split(".")[0] for a in node.names}
    if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        names.add(statement.name)
    names |= {n.value.id for n in ast.walk(statement) if isinstance(n, ast.Attribute)
              and isinstance(n.value, ast.Name) and not isinstance(n.ctx, ast.Load)}  # ``x.a = ...`` changes x
    return names


def _augments(statement: ast.stmt, name: str) -> bool:
    """Does ``statement`` change ``name``'s value rather than bind it anew (``x += 1``, ``x.a = 1``)?"""
    if isinstance(statement, ast.AugAssign):
        return True
    return any(isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name) and n.value.id == name
               and not isinstance(n.ctx, ast.Load) for n in ast.walk(statement))


def _sets_environment(statement: ast.stmt) -> bool:
    return "environ" in {n.attr for n in ast.walk(statement) if isinstance(n, ast.Attribute)}


def _returning_the_op(function: ast.FunctionDef) -> ast.FunctionDef | None:
    """``function`` ended right after its op's statement, returning what that statement assigned (what came
    after it only used the op's result)."""
    at = next((k for k, s in enumerate(function.body) if marked(s)), None)
    if at is None or at == len(function.body) - 1:
        return None
    statement = function.body[at]
    if not (isinstance(statement, ast.Assign) and len(statement.targets) == 1
            and isinstance(statement.targets[0], ast.Name)):
        return None
    cut = copy.deepcopy(function)
    cut.body = cut.body[:at + 1] + [ast.Return(ast.Name(statement.targets[0].id, ast.Load()))]
    return cut
