"""The overlay's folder is full: one sentence naming it and the room needed, TIP: TMPDIR.

A real "No space left on device": the file the export writes is a link to
/dev/full, which refuses every write with ENOSPC, as a 1 MB tmpfs would.
docs/faults.md, "Environments and history".
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from fake_jax import make_repo
from kit.errors import OverlayUnwritable, StorageError
from kit.exit_codes import EXIT_FAILED
from kit.history.commit_range import resolve
from kit.history.export import export_files
from kit.history.source import History


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full to fill a disk for real")
def test_a_full_overlay_folder_is_one_sentence_with_the_room_an_overlay_needs(tmp_path: Path) -> None:
    history = History(make_repo(tmp_path / "jax"), "test")
    commit = resolve(history, "jax-v0.2.0")
    folder = tmp_path / "tmp" / "kit-1-commit-x"
    (folder / "jax").mkdir(parents=True)
    os.symlink("/dev/full", folder / "jax" / "__init__.py")
    with pytest.raises(OverlayUnwritable) as full:
        export_files(history, commit, ["jax"], folder)
    assert isinstance(full.value, StorageError)
    assert full.value.exit_code == EXIT_FAILED
    assert full.value.render() == (
        f"ERROR: could not lay commit {commit[:10]}'s files out in {folder} (No space left on device); an overlay "
        f"needs about 15 MB free there\n"
        f"TIP: free some space in {folder.parent}, or set TMPDIR to a folder with room for it (the overlays go "
        "there): TMPDIR=/path/with/room nox -s bisect -- ...")


def test_an_unwritable_temp_folder_is_one_sentence(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """The overlay's folder cannot even be made: one sentence naming the temp folder, TIP: TMPDIR."""
    import tempfile

    from kit.install.overlay import new_overlay_folder

    blocked = tmp_path / "not-a-folder"
    blocked.write_text("a file where TMPDIR should be a folder\n")
    monkeypatch.setattr(tempfile, "tempdir", str(blocked))
    with pytest.raises(OverlayUnwritable) as unwritable:
        new_overlay_folder()
    assert unwritable.value.render().startswith(f"ERROR: could not make a folder for a commit's overlay in {blocked}")
    assert "TMPDIR" in unwritable.value.render()
