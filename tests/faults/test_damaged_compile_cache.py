"""A damaged entry of the compile cache is dropped as JAX reports it, and this run's compile is kept whole.

JAX, meeting an entry it cannot read (torn by a kill, overwritten), warns
"Error reading persistent compilation cache entry for 'jit_f'", compiles
again, and keeps the old entry, since one is there: every later run warned
the same and compiled again. `repro.compile_cache` now removes that
program's entries when JAX says so, so the compile writes them afresh; the
record's compile-cache figures say how many were dropped. The second test
runs it in a real release (from `.nox/jax-envs`, built where it is not).
docs/faults.md, "Environments and history".
"""

from __future__ import annotations

import os
import subprocess
import warnings
from pathlib import Path

import pytest

from repro import compile_cache
from repro.compile_cache import CompileCache
from tests.real_releases import release_python

ROOT = Path(__file__).resolve().parents[2]
JAX_SAYS = "Error reading persistent compilation cache entry for 'jit_f': error: Error -3 while decompressing data"


def test_the_entries_of_a_program_jax_cannot_read_are_removed_when_it_says_so(tmp_path: Path) -> None:
    for name in ("jit_f-aaaa-cache", "jit_f-aaaa-atime", "jit_g-bbbb-cache"):
        (tmp_path / name).write_bytes(b"torn")
    cache = CompileCache(str(tmp_path))
    with warnings.catch_warnings():  # showwarning is put back on leaving
        warnings.showwarning = lambda *args, **kwargs: None  # where the warning would be printed
        compile_cache._drop_what_jax_cannot_read(cache)
        warnings.showwarning(UserWarning(JAX_SAYS), UserWarning, "jax/_src/compiler.py", 730)  # as JAX's warn shows it
    assert sorted(cache.dropped) == ["jit_f-aaaa-atime", "jit_f-aaaa-cache"]
    assert sorted(path.name for path in tmp_path.iterdir()) == ["jit_g-bbbb-cache"]  # another program's: kept
    cache.counting, cache.events = True, [compile_cache._REQUESTS]
    assert compile_cache.summary(cache.figures()) == (
        "compile cache: 0 of 1 compiles reused; 2 damaged entries dropped and written again")


PROGRAM = """
import sys
sys.path.insert(0, sys.argv[1])
import jax, jax.numpy as jnp
from repro import compile_cache
cache = compile_cache.enable(jax)
jax.jit(lambda x: jnp.sin(x) * 2 + 1)(jnp.arange(4.0)).block_until_ready()
print(compile_cache.summary(cache.figures()))
"""


@pytest.mark.integration
def test_a_torn_entry_warns_once_and_the_next_run_reuses_what_was_written(tmp_path: Path) -> None:
    python = release_python("0.6.0")
    folder = tmp_path / "cache"

    def run() -> subprocess.CompletedProcess[str]:
        return subprocess.run([str(python), "-c", PROGRAM, str(ROOT)], capture_output=True, text=True, timeout=300,
                              env={**os.environ, compile_cache.ENV: str(folder)})

    assert run().returncode == 0
    for entry in folder.iterdir():
        entry.write_bytes(os.urandom(100))  # torn, as by a kill mid-write
    torn = run()
    assert "Error reading persistent compilation cache entry" in torn.stderr
    assert "damaged entries dropped and written again" in torn.stdout
    after = run()
    assert "Error reading persistent compilation cache entry" not in after.stderr  # was: on every run, for good
    assert after.stdout.strip() == "compile cache: 2 of 2 compiles reused"
