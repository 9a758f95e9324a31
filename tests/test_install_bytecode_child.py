"""kit/install/bytecode_child.py: the overlay's bytecode, copied from a cache only when the whole entry checks out.

Called in-process here (it is stdlib only), and once by the oldest Python the kit supports, as a release
environment's interpreter runs it. The overlay round trip is in test_install_bytecode.py, corrupt caches in
tests/faults/test_bytecode_cache.py.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import py_compile
import subprocess
import sys
from pathlib import Path

import pytest

from kit.install import bytecode_child as child
from kit.install.envs import find_interpreter


def _compiled(tmp_path: Path, text: str, mode: py_compile.PycInvalidationMode) -> tuple[bytes, bytes]:
    """(source, pyc) of ``text`` compiled by this interpreter with ``mode``."""
    source = tmp_path / "m.py"
    source.write_text(text)
    pyc = tmp_path / "m.pyc"
    py_compile.compile(str(source), cfile=str(pyc), doraise=True, invalidation_mode=mode)
    return source.read_bytes(), pyc.read_bytes()


def _entry(code: bytes) -> bytes:
    return code + hashlib.sha256(code).digest()


def test_a_cache_name_is_of_the_source_and_this_pythons_magic() -> None:
    name = child.cached_name(b"x = 1\n")
    tag, shard, file = name.split(os.sep)
    assert tag == sys.implementation.cache_tag
    assert file.startswith(shard)
    assert file.endswith(".pyc")
    assert child.cached_name(b"x = 2\n") != name
    assert child.cached_name(b"x = 1\n") == name


def test_sources_are_the_overlays_own_python_files(tmp_path: Path) -> None:
    (tmp_path / "pkg" / "__pycache__").mkdir(parents=True)
    (tmp_path / "pkg" / "a.py").write_text("")
    (tmp_path / "pkg" / "data.txt").write_text("")
    (tmp_path / "pkg" / "__pycache__" / "stale.py").write_text("")
    (tmp_path / "linked.py").symlink_to(tmp_path / "pkg" / "a.py")  # the installed package's: left alone
    (tmp_path / "linked_dir").symlink_to(tmp_path / "pkg", target_is_directory=True)
    assert child.sources(str(tmp_path)) == [str(tmp_path / "pkg" / "a.py")]


def test_a_whole_entry_of_this_source_is_verified(tmp_path: Path) -> None:
    source, code = _compiled(tmp_path, "x = 1\n", py_compile.PycInvalidationMode.CHECKED_HASH)
    assert child.verified(_entry(code), source) == code


def test_an_entry_with_one_byte_changed_after_the_header_is_refused(tmp_path: Path) -> None:
    # The header alone checks out (magic, flags, source hash): only the trailing hash can see this.
    source, code = _compiled(tmp_path, "x = 1\n", py_compile.PycInvalidationMode.CHECKED_HASH)
    entry = bytearray(_entry(code))
    entry[20] ^= 0xFF
    assert child.verified(bytes(entry), source) is None


def test_an_entry_of_another_source_or_kind_is_refused(tmp_path: Path) -> None:
    source, code = _compiled(tmp_path, "x = 1\n", py_compile.PycInvalidationMode.CHECKED_HASH)
    assert child.verified(_entry(code), b"x = 2\n") is None
    _, unchecked = _compiled(tmp_path, "x = 1\n", py_compile.PycInvalidationMode.UNCHECKED_HASH)
    assert child.verified(_entry(unchecked), source) is None  # an unchecked pyc would never notice a new source
    _, stamped = _compiled(tmp_path, "x = 1\n", py_compile.PycInvalidationMode.TIMESTAMP)
    assert child.verified(_entry(stamped), source) is None


@pytest.mark.parametrize("entry", [b"", b"short", b"\x00" * 40])
def test_entries_too_short_or_of_an_older_kit_are_refused(entry: bytes) -> None:
    assert child.verified(entry, b"x = 1\n") is None


def test_copy_cached_says_absent_copied_or_dropped(tmp_path: Path) -> None:
    source, code = _compiled(tmp_path, "x = 1\n", py_compile.PycInvalidationMode.CHECKED_HASH)
    cached, pyc = tmp_path / "cache" / "e.pyc", tmp_path / "out" / "__pycache__" / "m.pyc"
    assert child.copy_cached(str(cached), source, str(pyc)) == child.ABSENT
    assert not pyc.exists()
    cached.parent.mkdir()
    cached.write_bytes(_entry(code))
    assert child.copy_cached(str(cached), source, str(pyc)) == child.COPIED
    assert pyc.read_bytes() == code
    cached.write_bytes(_entry(code)[:-1])  # torn
    assert child.copy_cached(str(cached), source, str(pyc)) == child.DROPPED
    assert not cached.exists()


def test_main_compiles_then_copies_and_counts_a_file_that_does_not_compile(tmp_path: Path,
                                                                          capsys: pytest.CaptureFixture[str]) -> None:
    folder, cache = tmp_path / "overlay", tmp_path / "cache"
    (folder / "jax").mkdir(parents=True)
    (folder / "jax" / "ok.py").write_text("x = 1\n")
    (folder / "jax" / "broken.py").write_text("def (:\n")
    child.main(str(cache), str(folder))
    assert capsys.readouterr().out.split() == ["0", "1", "1", "0"]
    pyc = Path(importlib.util.cache_from_source(str(folder / "jax" / "ok.py")))
    pyc.unlink()
    child.main(str(cache), str(folder))  # another commit's overlay with the same file: copied, not compiled
    assert capsys.readouterr().out.split() == ["1", "0", "1", "0"]
    assert pyc.is_file()


OLDEST = find_interpreter("3.9")  # as the kit finds a release's Python: pyenv's, then PATH


@pytest.mark.skipif(OLDEST is None, reason="no Python 3.9 here")
def test_the_oldest_python_runs_it_and_imports_what_it_wrote(tmp_path: Path) -> None:
    # It runs under each release environment's own interpreter: 3.9 syntax and stdlib, and pycs that Python accepts.
    folder = tmp_path / "overlay"
    folder.mkdir()
    (folder / "probe_mod.py").write_text("VALUE = 6 * 7\n")
    done = subprocess.run([str(OLDEST), str(Path(child.__file__)), str(tmp_path / "cache"), str(folder)],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["0", "1", "0", "0"]
    imported = subprocess.run([str(OLDEST), "-c", "import probe_mod, sys; print(probe_mod.VALUE, probe_mod.__cached__)"],
                              cwd=folder, capture_output=True, text=True, timeout=60)
    assert imported.stdout.split()[0] == "42"
    assert "cpython-39" in imported.stdout
