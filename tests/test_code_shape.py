"""Small modules and functions that read top to bottom: no module over 800 lines, no function over 80.

500 lines is where a module should be looked at again: the modules past it are listed at the end of the run
(``pytest_terminal_summary`` in conftest.py), never failed, so nothing is split for the count alone. Parsed,
not imported, like tests/test_layers.py: the kit's own code and the repro code both.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

from tests.source_trees import nodes

ROOT = Path(__file__).resolve().parent.parent
MAX_MODULE_LINES = 800
SOFT_MODULE_LINES = 500
MAX_FUNCTION_LINES = 80


def _sources() -> list[Path]:
    return sorted([*ROOT.joinpath("kit").rglob("*.py"), *ROOT.joinpath("repro").rglob("*.py"), ROOT / "noxfile.py"])


def module_lengths(over: int) -> dict[str, int]:
    """Each source module longer than ``over`` lines, with its length."""
    return {str(p.relative_to(ROOT)): n for p in _sources() if (n := p.read_text().count("\n")) > over}


def test_no_module_is_over_800_lines() -> None:
    assert module_lengths(MAX_MODULE_LINES) == {}


def test_no_function_is_over_80_lines() -> None:
    long = {}
    for path in _sources():
        for node in nodes(path):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                lines = (node.end_lineno or node.lineno) - node.lineno + 1
                if lines > MAX_FUNCTION_LINES:
                    long[f"{path.relative_to(ROOT)}:{node.lineno} {node.name}"] = lines
    assert long == {}


def test_no_test_module_imports_another() -> None:
    # Shared fixtures live in conftest.py and helper modules (tests/*.py not named test_*): running one
    # suite must not depend on another suite's internals.
    tests = ROOT / "tests"
    importing = {}
    for path in sorted(tests.rglob("test_*.py")):
        if not re.search(r"from\s+[\w.]*\btest_", path.read_text(encoding="utf-8")):
            continue  # no import could name a test module: parsing 300 files costs a second of the lane
        for node in nodes(path):
            if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[-1].startswith("test_"):
                importing[str(path.relative_to(ROOT))] = node.module
    assert importing == {}


def test_no_two_classes_of_kit_share_a_name() -> None:
    # One name per concept: four classes were called Outcome and three Finding, and a reader had to find out
    # which one a module meant (issue 61).
    where: dict[str, list[str]] = {}
    for path in sorted(ROOT.joinpath("kit").rglob("*.py")):
        for node in nodes(path):
            if isinstance(node, ast.ClassDef):
                where.setdefault(node.name, []).append(str(path.relative_to(ROOT)))
    assert {name: paths for name, paths in where.items() if len(paths) > 1} == {}
