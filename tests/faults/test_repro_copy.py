"""The installed kit's copy of ``repro/`` in the user cache, torn or edited: checked before use, laid again.

Was: a torn file there made every check crash (a SyntaxError in repro), recorded as the release's crash.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from kit.package_files import REPRO, lay_repro


@pytest.mark.parametrize("damage", ["torn", "deleted", "extra"])
def test_a_damaged_copy_of_repro_is_laid_again_and_said(tmp_path: Path, damage: str,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    laid = lay_repro(REPRO, tmp_path)
    copied = laid / "repro" / "scaling.py"
    if damage == "torn":
        copied.write_bytes(copied.read_bytes()[:100])
    elif damage == "deleted":
        copied.unlink()
    else:
        (laid / "repro" / "stray.py").write_text("raise SystemExit(3)\n")
    again = lay_repro(REPRO, tmp_path)
    assert again == laid
    assert copied.read_bytes() == (REPRO / "scaling.py").read_bytes()
    assert not (laid / "repro" / "stray.py").exists()
    said = capsys.readouterr().err
    assert f"kit: the kit's own copy of repro/ in {laid} was damaged (" in said and "laying it again" in said
    assert sorted(p.name for p in tmp_path.iterdir()) == [laid.name]  # nothing set aside is left behind


def test_a_whole_copy_is_reused_without_a_word(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    laid = lay_repro(REPRO, tmp_path)
    (laid / "repro" / "__pycache__").mkdir(exist_ok=True)
    (laid / "repro" / "__pycache__" / "scaling.cpython-313.pyc").write_bytes(b"bytecode a child wrote")
    assert lay_repro(REPRO, tmp_path) == laid and capsys.readouterr().err == ""
