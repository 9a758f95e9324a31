"""A record its results folder refused goes to a folder made fresh for it, never to a name someone else made first.

The fault: the record went to the fixed ``<TMPDIR>/jax-kit-unsaved-records``;
another user of a shared temp folder could make it first (or a link there to a
folder of theirs) and receive the records. Now the folder is a `mkdtemp`
(``jax-kit-unsaved-records-XXXXXXXX``, mode 0700), named in the message.
docs/faults.md, "Untrusted input and the kit's folders".
"""

from __future__ import annotations

import json
import stat
from pathlib import Path
from typing import Any

import pytest

from kit import records
from kit.errors import StorageError
from kit.records import store
from tests.record_samples import make_record


def _disk_full(*args: Any, **kwargs: Any) -> Any:
    raise OSError(28, "No space left on device")


def test_a_link_made_beforehand_at_the_old_name_receives_nothing(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    temp, theirs = tmp_path / "tmp", tmp_path / "another-users-folder"
    temp.mkdir()
    theirs.mkdir()
    (temp / records.UNSAVED_DIR_NAME).symlink_to(theirs)  # made before the kit ran, by someone else
    monkeypatch.setattr(store.tempfile, "tempdir", str(temp))
    monkeypatch.setattr(store, "write_record", _disk_full)
    record = make_record(status="ran", verdict="affected")
    with pytest.raises(StorageError) as caught:
        records.save_record(record, tmp_path / "results")
    assert list(theirs.iterdir()) == []  # was: the record, written through the link
    kept = Path(caught.value.message.rpartition("it was kept at ")[2])
    assert kept.parent.parent == temp and kept.parent.name.startswith(records.UNSAVED_DIR_NAME + "-")
    assert not kept.parent.is_symlink()
    assert stat.S_IMODE(kept.parent.stat().st_mode) == 0o700
    assert json.loads(kept.read_text()) == record
    # A second record of the same process goes beside the first: one folder to move back.
    with pytest.raises(StorageError) as again:
        records.save_record(make_record(status="ran", verdict="unaffected", check="correctness"), tmp_path / "results")
    assert Path(again.value.message.rpartition("it was kept at ")[2]).parent == kept.parent
