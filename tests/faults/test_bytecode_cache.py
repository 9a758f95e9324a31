"""A damaged commit-bytecode cache: a bad entry is dropped and compiled again, never imported.

The entries under `.nox/commit-bytecode/` are checked-hash pycs; Python checks
their header against the source, not the code after it, so a body overwritten
behind an intact header made every commit probe's `import jax` fail with
"ValueError: bad marshal data". Each entry now carries the hash of its whole
content, checked before it is copied into an overlay. docs/faults.md,
"Environments and history"; docs/commits.md.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from kit.install.bytecode import fill_bytecode

PYTHON = Path(sys.executable)
FILES = {"jax/__init__.py": "from jax.core import X\n", "jax/core.py": "X = 'from the source'\n"}


def overlay(root: Path) -> Path:
    for name, text in FILES.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root


def imported(folder: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", "import jax; print(jax.X)"], capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(folder), "PYTHONDONTWRITEBYTECODE": "1"})


def test_cache_entries_with_corrupt_bodies_are_dropped_and_compiled_again(tmp_path: Path) -> None:
    cache = tmp_path / "commit-bytecode"
    fill_bytecode(PYTHON, overlay(tmp_path / "a"), cache)
    entries = sorted(cache.rglob("*.pyc"))
    assert len(entries) == 2
    for entry in entries:  # the 16-byte header kept, the code after it garbage
        body = entry.read_bytes()
        entry.write_bytes(body[:16] + b"\xff" * (len(body) - 16))
    made = fill_bytecode(PYTHON, overlay(tmp_path / "b"), cache)
    assert (made.copied, made.compiled, made.dropped) == (0, 2, 2)
    assert str(made) == "bytecode: 0 files from the cache, 2 compiled now (2 of them over cache entries that were damaged, dropped)"
    done = imported(tmp_path / "b")
    assert done.stdout.strip() == "from the source"
    assert "bad marshal data" not in done.stderr
    again = fill_bytecode(PYTHON, overlay(tmp_path / "c"), cache)
    assert (again.copied, again.compiled, again.dropped) == (2, 0, 0), "the cache was filed again, whole"


def test_a_torn_entry_and_a_bare_pyc_of_an_older_kit_are_dropped(tmp_path: Path) -> None:
    cache = tmp_path / "commit-bytecode"
    fill_bytecode(PYTHON, overlay(tmp_path / "a"), cache)
    torn, bare = sorted(cache.rglob("*.pyc"))
    torn.write_bytes(torn.read_bytes()[:20])
    bare.write_bytes(bare.read_bytes()[:-32])  # a pyc as it is, without the hash the kit files after it
    made = fill_bytecode(PYTHON, overlay(tmp_path / "b"), cache)
    assert (made.copied, made.compiled, made.dropped) == (0, 2, 2)
    assert imported(tmp_path / "b").stdout.strip() == "from the source"
