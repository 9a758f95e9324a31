"""An audit's tests with compiles reused from the last audit: JAX's persistent compilation cache, kept on disk.

Measured on 0.11.0 (cProfile of one of the audit's pytest processes): XLA's
compile was 34 of its 57 s, 740 compiles, most of them the eager operations
of a test's set-up run again by every audit (``testScaledMatmul``'s twelve
cases, 28 s). JAX keys an entry by the program, the compile options, the
devices, the XLA flags and the jaxlib, so a hit is an executable of the very
same program; the folder adds the CPU model and the build
(`kit.run.compile_cache.compile_cache_dir`, the one the bisects share).

The cache changes what a test can see of compiling, so its use is bounded:

* where a test's outcome is not a pass with the cache, the kit runs its whole
  entry again without it, and that run is the entry's answer: JAX's harness
  itself fails a test under which the cache object changed (``Test changed
  the compilation cache object``, the lazily made cache of a process's first
  compile), a write it cannot make warns (an error under JAX's warning
  filters), and an entry's other tests stop once one fails;
* the one way the cache could turn a failure into a pass is a test that looks
  at compiling (counts compiles, reads compile logs, warnings or the compiled
  text): a test whose source names any of that (`looks_at_compiling`) never
  runs with the cache. Of the 244 confirmed tests 20 entries' tests do.

So an entry said absent passed every test with reused compiles where no test
looks at compiling, and every other answer is a run without them.
"""

from __future__ import annotations

import ast
import json
import re
import shutil
from pathlib import Path
from typing import Iterable

from ...atomic_files import atomic_write_text
from ...install import Environment
from ...records import JsonTextError, read_json
from ...run.compile_cache import compile_cache_dir
from .kept_tests import kept_file

LARGEST_BYTES = 1 << 30
"""Past this, the folder is emptied before an audit (a cache: what it held is compiled again)."""

_NAMED = frozenset({
    "assertLogs", "assertNoLogs", "assertWarns", "assertWarnsRegex", "catch_warnings", "warns", "filterwarnings",
    "simplefilter", "capture_stderr", "capture_stdout", "monitoring", "register_event_listener", "record_event",
    "as_text", "hlo_modules", "cost_analysis", "memory_analysis", "runtime_executable", "xla_extension_executable"})
"""Names of what reads compile logs, warnings, events or the compiled program."""
_NAMING = re.compile(r"^count_|cache|dump|persistent|compil", re.IGNORECASE)
"""Compile counters and caches, XLA dumps, an ahead-of-time compile (its executable may come from the cache)."""
_SAYING = re.compile(r"compil|dump|cache", re.IGNORECASE)
"""A string that names them (a flag, or a script run in a subprocess, which inherits the cache)."""


def looks_at_compiling(function: ast.AST) -> bool:
    """Whether a test function's source names anything that sees XLA's compile itself; JAX's helpers that only
    jit and compare (``_CompileAndCheck``) or lower (``compiler_ir``) do not."""
    for node in ast.walk(function):
        name = node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) \
            else node.arg if isinstance(node, ast.keyword) else None
        if name and (name in _NAMED or (_NAMING.search(name) and name not in _ONLY_TRACE)):
            return True
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and _SAYING.search(node.value):
            return True
    return False


_ONLY_TRACE = frozenset({"_CompileAndCheck", "compiler_ir", "ensure_compile_time_eval"})


def cache_folder(envs_dir: Path, environment: Environment) -> Path | None:
    """Where an audit in ``environment`` keeps its compiles (None: no jaxlib to key it by, or no folder it can
    make); emptied first where it has grown past `LARGEST_BYTES`."""
    folder = compile_cache_dir(envs_dir, environment, "cpu")
    if folder is None:
        return None
    try:
        if folder.is_dir() and _size(folder) > LARGEST_BYTES:
            shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir(parents=True, exist_ok=True)
    except OSError:
        return None  # a folder it cannot write (read-only, full): every compile is the audit's own, as before
    return folder


def cache_env(folder: Path | None) -> dict[str, str]:
    """What a pytest process is told to use the cache with no minimum compile time or size (a test's programs
    compile in a fraction of a second, below JAX's 1 s); XLA's own autotuning caches stay off."""
    if folder is None:
        return {}
    return {"JAX_COMPILATION_CACHE_DIR": str(folder.absolute()), "JAX_ENABLE_COMPILATION_CACHE": "true",
            "JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS": "0", "JAX_PERSISTENT_CACHE_MIN_ENTRY_SIZE_BYTES": "-1",
            "JAX_PERSISTENT_CACHE_ENABLE_XLA_CACHES": "none", "KIT_HARVEST_COMPILE_CACHE": "1"}


CALLERS_CACHE = ("JAX_COMPILATION_CACHE_DIR", "JAX_ENABLE_COMPILATION_CACHE", "JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS",
                 "JAX_PERSISTENT_CACHE_MIN_ENTRY_SIZE_BYTES", "JAX_PERSISTENT_CACHE_ENABLE_XLA_CACHES",
                 "JAX_COMPILATION_CACHE_MAX_SIZE", "KIT_HARVEST_COMPILE_CACHE")
"""The caller's cache settings, never passed on: a run without the kit's cache runs without any."""


_UNREADABLE = re.compile(r"Error (reading|writing) persistent compilation cache entry")
"""JAX's warning for an entry it cannot read (torn, overwritten) or write: an error under JAX's warning filters."""


def emptied_if_unreadable(folder: Path, messages: Iterable[str]) -> bool:
    """Empty ``folder`` where a test failed on an entry JAX could not read or write. JAX never replaces an entry
    it cannot read, so each audit would fail those tests again and run their entries twice (0.11.0 with every
    entry damaged: 169 s instead of 55, every answer the same); emptied, the next audit fills it again."""
    if not any(_UNREADABLE.search(message) for message in messages):
        return False
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True, exist_ok=True)
    return True


NOT_PASSING = "not-passing.json"
"""Beside the environment (`kit.known.harvest.kept_tests`): the entries that did not pass every test in the last
audit there. They run without the cache from the start, beside those that do, instead of twice: once with it, and
again without it once it did not pass (on 0.11.0, 53 of 136 entries, a 13 s run after the others)."""


def not_passing_before(environment: Environment) -> set[str]:
    """The entries of `NOT_PASSING` (none where it is missing or unreadable: each then runs with the cache, and
    again without it where it does not pass)."""
    path = kept_file(environment, NOT_PASSING)
    try:
        data = read_json(path) if path is not None else []
    except (OSError, JsonTextError):
        return set()
    return {str(i) for i in data} if isinstance(data, list) else set()


def keep_not_passing(environment: Environment, audited: set[str], not_passing: set[str]) -> None:
    """`NOT_PASSING` after an audit of ``audited`` entries (an audit of a few keeps what it knows of the others)."""
    path = kept_file(environment, NOT_PASSING)
    if path is not None:
        atomic_write_text(path, json.dumps(sorted((not_passing_before(environment) - audited) | not_passing)))


def _size(folder: Path) -> int:
    total = 0
    for path in folder.rglob("*"):
        try:
            total += path.stat().st_size if path.is_file() else 0
        except OSError:
            continue  # removed meanwhile by a run that shares the folder
    return total
