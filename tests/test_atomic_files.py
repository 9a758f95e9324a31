"""kit.atomic_files: files replaced whole, several together or not at all, with the umask's mode."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from kit import atomic_files


def _disk_full(*args: Any, **kwargs: Any) -> Any:
    raise OSError(28, "No space left on device")


def test_files_written_together_are_replaced_together_or_not_at_all(tmp_path: Path, monkeypatch) -> None:
    first, second = tmp_path / "matrix.md", tmp_path / "matrix.json"
    first.write_text("old md")
    second.write_text("old json")
    real_fsync, calls = os.fsync, []

    def fsync_then_full(fd: int) -> None:
        calls.append(fd)
        if len(calls) == 2:  # the second temp file does not fit
            _disk_full()
        real_fsync(fd)

    monkeypatch.setattr(atomic_files.os, "fsync", fsync_then_full)
    with pytest.raises(OSError):
        atomic_files.atomic_write_texts({first: "new md", second: "new json"})
    assert (first.read_text(), second.read_text()) == ("old md", "old json")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["matrix.json", "matrix.md"]
    monkeypatch.setattr(atomic_files.os, "fsync", real_fsync)
    atomic_files.atomic_write_texts({first: "new md", second: "new json"})
    assert (first.read_text(), second.read_text()) == ("new md", "new json")
    assert oct(first.stat().st_mode & 0o777) == oct(0o666 & ~atomic_files.file_mode_mask())


def test_bytes_are_written_as_they_are_and_a_failed_write_keeps_the_old_file(tmp_path: Path, monkeypatch) -> None:
    png = tmp_path / "plots" / "scaling-cpu.png"  # the folder is made on the way
    atomic_files.atomic_write_bytes(png, b"\x89PNG\r\n\x1a\n old")
    assert png.read_bytes() == b"\x89PNG\r\n\x1a\n old"
    monkeypatch.setattr(atomic_files.os, "fsync", _disk_full)
    with pytest.raises(OSError):
        atomic_files.atomic_write_bytes(png, b"\x89PNG\r\n\x1a\n new")
    assert png.read_bytes() == b"\x89PNG\r\n\x1a\n old"
    assert [p.name for p in png.parent.iterdir()] == ["scaling-cpu.png"]  # no temp file left behind


def test_text_is_utf8_whatever_the_locale(tmp_path: Path) -> None:
    path = tmp_path / "matrix.md"
    atomic_files.atomic_write_text(path, "jax 0.4.35 · affected ±3%\n")
    assert path.read_bytes() == "jax 0.4.35 · affected ±3%\n".encode("utf-8")
