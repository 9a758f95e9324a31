"""A program being reduced: its syntax tree, the statement that holds the op (``--op``), and its text.

A candidate is a `Program` whose tree is a changed copy of another's. The op's statement is marked on its
node (``MARK``): a copy keeps the mark, a pass that rebuilds a statement carries it over (`carry`), and
the op's lines in a candidate's text are found by unparsing and reading the mark's node back
(`Program.marked_lines`). Everything here is pure: no program runs.
"""

from __future__ import annotations

import ast
import copy
import hashlib
from dataclasses import dataclass, field
from typing import Iterator, TypeVar

NodeT = TypeVar("NodeT", bound=ast.AST)

MARK = "_kit_reduce_op"
"""The attribute a statement holding ``--op``'s line carries through every copy."""


def marked(node: ast.AST) -> bool:
    return bool(getattr(node, MARK, False))


def carry(old: ast.AST, new: NodeT) -> NodeT:
    """``new`` marked as ``old`` was (a statement rebuilt from another keeps the op)."""
    if marked(old):
        setattr(new, MARK, True)
    return new


@dataclass
class Program:
    tree: ast.Module
    _text: str | None = field(default=None, repr=False, compare=False)

    @classmethod
    def parse(cls, text: str, op_line: int | None = None) -> Program:
        """``text`` parsed; with ``op_line``, the innermost statement spanning it marked (ValueError: none)."""
        tree = ast.parse(text)
        if op_line is not None:
            holder = innermost_statement(tree, op_line)
            if holder is None:
                raise ValueError(f"no statement of the program is on line {op_line}")
            setattr(holder, MARK, True)
        return cls(tree)

    def copy(self) -> Program:
        return Program(copy.deepcopy(self.tree))

    @property
    def text(self) -> str:
        if self._text is None:
            self._text = ast.unparse(ast.fix_missing_locations(self.tree)) + "\n"
        return self._text

    @property
    def digest(self) -> str:
        return hashlib.sha256(self.text.encode("utf-8")).hexdigest()

    @property
    def statements(self) -> int:
        """How many statements it holds, nested ones and imports counted."""
        return sum(1 for node in ast.walk(self.tree) if isinstance(node, ast.stmt))

    @property
    def has_mark(self) -> bool:
        return any(marked(node) for node in ast.walk(self.tree))

    def marked_lines(self) -> tuple[int, int] | None:
        """The first and last line of the marked statement in `text` (None where no statement is marked)."""
        order = [node for node in ast.walk(self.tree)]
        at = next((i for i, node in enumerate(order) if marked(node)), None)
        if at is None:
            return None
        again = list(ast.walk(ast.parse(self.text)))
        node = again[at] if at < len(again) else None
        if not isinstance(node, ast.stmt):
            return None
        return node.lineno, node.end_lineno or node.lineno


def innermost_statement(tree: ast.AST, line: int) -> ast.stmt | None:
    """The deepest statement whose lines span ``line``."""
    found: ast.stmt | None = None
    for node in ast.walk(tree):
        if isinstance(node, ast.stmt) and node.lineno <= line <= (node.end_lineno or node.lineno):
            if found is None or node.lineno >= found.lineno and (node.end_lineno or 0) <= (found.end_lineno or 0):
                found = node
    return found


def bodies(tree: ast.AST) -> Iterator[tuple[ast.AST, str]]:
    """Every statement list of the tree, as (owner, field): a module's, a function's, a loop's, a branch's."""
    for node in ast.walk(tree):
        for name in ("body", "orelse", "finalbody"):
            value = getattr(node, name, None)
            if isinstance(value, list) and value and isinstance(value[0], ast.stmt):
                yield node, name
