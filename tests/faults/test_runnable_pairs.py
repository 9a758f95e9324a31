"""A kept (commit, build) pair of the wrong types (docs/faults.md, "Bisect"): the pair is asked again, never a
traceback in the middle of a commit search (``"seconds": "x"`` raised ValueError there)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from kit.bisect.commits.candidates import CommitCandidate
from kit.bisect.commits.runnable import PairStore
from kit.history.version_file import JaxlibRange
from kit.bisect.commits.builds import Build

BUILD = Build("0.4.35", "0.4.35", "3.12", True, "bad")
COMMIT = CommitCandidate("a" * 40, (), None, "3.12", "0.4.35", commit="a" * 40, build=BUILD,
                         accepts=JaxlibRange("0.4.35", "0.4.36"))


@pytest.mark.parametrize("kept", [{"ok": True, "seconds": "x"}, {"ok": True, "seconds": [1]},
                                  {"ok": False, "error": {"a": 1}}, {"ok": True, "seconds": True}])
def test_a_kept_pair_of_the_wrong_types_is_asked_again(tmp_path: Path, kept: dict[str, Any]) -> None:
    store = PairStore(tmp_path, "cpu")
    (tmp_path / f"{store.key(COMMIT)}.json").write_text(json.dumps(kept))
    assert PairStore(tmp_path, "cpu").get(COMMIT) is None


def test_a_sound_kept_pair_is_still_read(tmp_path: Path) -> None:
    store = PairStore(tmp_path, "cpu")
    (tmp_path / f"{store.key(COMMIT)}.json").write_text(json.dumps({"ok": False, "error": "ImportError: x",
                                                                    "seconds": 2}))
    found = PairStore(tmp_path, "cpu").get(COMMIT)
    assert found is not None
    assert (found.ok, found.error, found.seconds) == (False, "ImportError: x", 2.0)
