"""The test functions a commit added or changed: the AST of each test file at the commit against its parent.

A test is a ``test*`` function at the top of the module or a ``test*``
method of a class there; it counts as changed when its syntax tree differs
(comments, blank lines and moves do not count: ``ast.dump`` leaves positions
out), or when the parent's file lacks it. Its pytest node id names it
(``tests/api_test.py::APITest::test_grad``); a parametrised test is every
case generated from that one function (`kit.known.harvest.select_plugin`).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from ...history.git import GitFailed, git
from ...history.source import History


@dataclass(frozen=True, order=True)
class TestFunction:
    """One test function of a file: where it is, its class ('' at module level), its name."""

    __test__ = False  # a name pytest would otherwise try to collect

    path: str
    cls: str
    name: str

    @property
    def node_id(self) -> str:
        return "::".join(part for part in (self.path, self.cls, self.name) if part)

    def to_json(self) -> list[str]:
        return [self.path, self.cls, self.name]


def test_functions(source: str, path: str) -> dict[TestFunction, str]:
    """Each test function of ``source`` and the dump of its tree; a file that does not parse has none."""
    return {test: ast.dump(node) for test, node in test_nodes(source, path).items()}


def test_nodes(source: str, path: str) -> dict[TestFunction, ast.AST]:
    """Each test function of ``source`` and its tree, not dumped: a caller comparing a few of a big file's
    functions dumps those only (an audit dumped all of api_test.py's thousand for one: 2/3 of its own CPU)."""
    return parsed_tests(source, path)[0]


def parsed_tests(source: str, path: str) -> tuple[dict[TestFunction, ast.AST], ast.Module | None]:
    """`test_nodes`, and the file's whole tree (None where it does not parse): for what a test calls in it."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return {}, None
    found: dict[TestFunction, ast.AST] = {}
    for node in tree.body:
        if _is_test(node):
            found[TestFunction(path, "", node.name)] = node  # type: ignore[attr-defined]
        elif isinstance(node, ast.ClassDef):
            for member in node.body:
                if _is_test(member):
                    found[TestFunction(path, node.name, member.name)] = member  # type: ignore[attr-defined]
    return found, tree


def _is_test(node: ast.AST) -> bool:
    return isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name.startswith("test")


def changed_functions(before: str | None, after: str, path: str) -> list[TestFunction]:
    """The test functions of ``after`` that ``before`` (None: the file is new) lacks or has otherwise, sorted."""
    old = test_functions(before, path) if before is not None else {}
    new = test_functions(after, path)
    return sorted(test for test, dump in new.items() if old.get(test) != dump)


def changed_tests(history: History, commit: str, parent: str, paths: tuple[str, ...]) -> list[TestFunction]:
    """What ``commit`` added or changed in its test files ``paths`` (a file it deleted has none)."""
    found: list[TestFunction] = []
    for path in paths:
        after = _file_at(history, commit, path)
        if after is None:
            continue
        found += changed_functions(_file_at(history, parent, path), after, path)
    return found


def _file_at(history: History, commit: str, path: str) -> str | None:
    try:
        return git(history.path, "show", f"{commit}:{path}")
    except GitFailed:
        return None  # not in that commit's tree
