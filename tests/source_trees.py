"""The project's source files parsed once per test process, for the guard tests that read them all.

test_layers, test_code_shape and test_outcome_words each walked every module of the kit, twice some of
them: five parses of the same 180 files, seconds of the unit lane. A file is parsed again only when it
changes (its size or modification time), so a test that writes a module reads what it wrote.
"""

from __future__ import annotations

import ast
import functools
from pathlib import Path


def tree(path: Path) -> ast.Module:
    """``path`` parsed."""
    stat = path.stat()
    return _parsed(str(path), stat.st_mtime_ns, stat.st_size)


def nodes(path: Path) -> list[ast.AST]:
    """Every node of ``path``, in ``ast.walk`` order."""
    stat = path.stat()
    return _walked(str(path), stat.st_mtime_ns, stat.st_size)


@functools.lru_cache(maxsize=None)
def _parsed(path: str, mtime_ns: int, size: int) -> ast.Module:
    return ast.parse(Path(path).read_text(encoding="utf-8"), path)


@functools.lru_cache(maxsize=None)
def _walked(path: str, mtime_ns: int, size: int) -> list[ast.AST]:
    return list(ast.walk(_parsed(path, mtime_ns, size)))
