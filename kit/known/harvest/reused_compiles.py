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
  text, times a call): a test whose source names any of that
  (`kit.known.harvest.compiling_tests`) never runs with the cache.

So an entry said absent passed every test with reused compiles where no test
looks at compiling, and every other answer is a run without them.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Iterable

from repro.compile_cache import SETTINGS, UNREADABLE, remove_entries

from ...atomic_files import atomic_write_text
from ...install import Environment
from ...records import JsonTextError, read_json
from ...run.compile_cache import compile_cache_dir
from .kept_tests import kept_file

LARGEST_BYTES = 1 << 30
"""Past this, the folder is emptied before an audit (a cache: what it held is compiled again)."""

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
    # the check's own settings (`repro.compile_cache.SETTINGS`), as the variables JAX reads each config from
    settings = {name.upper(): format(value, "g") if isinstance(value, float) else str(value)
                for name, value in SETTINGS}
    return {"JAX_COMPILATION_CACHE_DIR": str(folder.absolute()), "JAX_ENABLE_COMPILATION_CACHE": "true", **settings,
            "KIT_HARVEST_COMPILE_CACHE": "1"}


CALLERS_CACHE = ("JAX_COMPILATION_CACHE_DIR", "JAX_ENABLE_COMPILATION_CACHE", *(n.upper() for n, _ in SETTINGS),
                 "JAX_COMPILATION_CACHE_MAX_SIZE", "KIT_HARVEST_COMPILE_CACHE")
"""The caller's cache settings, never passed on: a run without the kit's cache runs without any."""


def drop_unreadable(folder: Path, messages: Iterable[str]) -> list[str]:
    """Remove the entries of each program a test failed to read from ``folder`` (JAX's warning names it, an error
    under JAX's warning filters), as `repro.compile_cache` does for a check: JAX never replaces an entry it cannot
    read, so every later audit failed those tests and ran their entries twice (0.11.0 with every entry damaged:
    169 s instead of 55, every answer the same). The entries removed (none where the folder cannot be written)."""
    programs = sorted({found.group(1) for message in messages for found in UNREADABLE.finditer(message)})
    removed: list[str] = []
    for program in programs:
        try:
            removed += remove_entries(str(folder), program)
        except OSError:
            continue  # a folder gone or not writable: those tests run again without the cache each time, as before
    return removed


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
