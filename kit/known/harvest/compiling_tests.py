"""Which of JAX's tests look at compiling: those never run with compiles reused from an earlier audit.

A reused compile skips XLA's compile and whatever it shows: its time, its logs
and warnings, the events JAX records, what XLA dumps or prints, the compiled
program read back. A test that reads any of that is the one kind whose failure
reused compiles could turn into a pass (a compile counted once, a slow compile
gone, a warning not raised), and so the one kind the kit never runs with them
(`kit.known.harvest.reused_compiles`). Told from the test's source: the names
and strings of the test function, of its class's ``setUp`` and decorators, and
of the functions and methods of its file that it calls, and that those call.
JAX's helpers that only jit and compare (``_CompileAndCheck``), lower
(``compiler_ir``) or trace (``ensure_compile_time_eval``) do not count.
"""

from __future__ import annotations

import ast
import hashlib
import re
from typing import Iterator

_NAMED = frozenset({
    "assertLogs", "assertNoLogs", "assertWarns", "assertWarnsRegex", "catch_warnings", "warns", "filterwarnings",
    "simplefilter", "capture_stderr", "capture_stdout", "redirect_stderr", "redirect_stdout", "dup2", "monitoring",
    "profiler", "as_text", "hlo_modules", "cost_analysis", "memory_analysis", "runtime_executable",
    "xla_extension_executable", "perf_counter", "monotonic", "process_time", "timeit", "time", "subprocess", "Popen",
    "executable", "capture_output"})
"""Logs, warnings and output read; events recorded; the compiled program read back; a clock; a child process (it
inherits the cache)."""
_NAMING = re.compile(r"^count_|cache|dump|persistent|compil|event", re.IGNORECASE)
"""Compile counters and caches, XLA dumps, an ahead-of-time compile (its executable may come from the cache)."""
_SAYING = re.compile(r"compil|dump|cache", re.IGNORECASE)
"""A string that names them (a flag, or a script run in a subprocess)."""
_ONLY_TRACE = frozenset({"_CompileAndCheck", "compiler_ir", "ensure_compile_time_eval"})

RULES = hashlib.sha256(repr((sorted(_NAMED), _NAMING.pattern, _SAYING.pattern, sorted(_ONLY_TRACE), "calls"))
                       .encode()).hexdigest()[:8]
"""These rules' digest: a kept answer of other rules is asked again (`kit.known.harvest.function_trees`)."""


def looks_at_compiling(function: ast.AST, module: ast.Module | None = None) -> bool:
    """Whether a test function, with what it reaches in ``module`` (its file), names anything that sees XLA's
    compile itself."""
    return any(_names_compiling(node) for node in _reached(function, module))


def _names_compiling(node: ast.AST) -> bool:
    for inner in ast.walk(node):
        name = inner.id if isinstance(inner, ast.Name) else inner.attr if isinstance(inner, ast.Attribute) \
            else inner.arg if isinstance(inner, ast.keyword) else None
        if name and name not in _ONLY_TRACE and (name in _NAMED or _NAMING.search(name)):
            return True
        if isinstance(inner, ast.Constant) and isinstance(inner.value, str) and _SAYING.search(inner.value):
            return True
    return False


def _reached(function: ast.AST, module: ast.Module | None) -> Iterator[ast.AST]:
    """The function; and where its file is given, its class's decorators and set-up, and the file's functions and
    methods it calls by name (``helper(...)``, ``self.helper(...)``), and those they call, and so on."""
    yield function
    if module is None:
        return
    owner = next((node for node in module.body if isinstance(node, ast.ClassDef) and function in node.body), None)
    if owner is not None:
        yield from owner.decorator_list
        yield from (m for m in owner.body if isinstance(m, ast.FunctionDef) and m.name in ("setUp", "setUpClass"))
    defined = {node.name: node for node in _functions(module)}
    seen, waiting = {id(function)}, [function]
    while waiting:
        for name in sorted(_called(waiting.pop())):
            helper = defined.get(name)
            if helper is not None and id(helper) not in seen:
                seen.add(id(helper))
                waiting.append(helper)
                yield helper


def _called(node: ast.AST) -> set[str]:
    calls = [call.func for call in ast.walk(node) if isinstance(call, ast.Call)]
    return {func.id if isinstance(func, ast.Name) else func.attr
            for func in calls if isinstance(func, (ast.Name, ast.Attribute))}


def _functions(module: ast.Module) -> Iterator[ast.FunctionDef | ast.AsyncFunctionDef]:
    for node in module.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            yield node
        elif isinstance(node, ast.ClassDef):
            yield from (m for m in node.body if isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef)))
