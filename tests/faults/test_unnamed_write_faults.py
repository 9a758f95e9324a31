"""A write refused with no file named (``OSError(ENOSPC)`` from a file already open, e.g. in a full TMPDIR).

Was: a traceback, the command line's last resort knowing only refusals that name their file.
"""

from __future__ import annotations

import errno
import tempfile
from pathlib import Path

import pytest

from kit import cli

ROOT = Path(__file__).resolve().parents[2]


def test_a_refused_write_without_a_file_name_is_one_sentence_and_exit_1(monkeypatch: pytest.MonkeyPatch,
                                                                       capsys: pytest.CaptureFixture[str]) -> None:
    def full(*args: object, **kwargs: object) -> int:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.chdir(ROOT)  # its matrix.toml
    monkeypatch.setattr(cli, "cmd_report", full)
    assert cli.main(["report"]) == 1
    err = capsys.readouterr().err
    assert err.splitlines() == [
        "ERROR: this machine refused one of the kit's writes (No space left on device): its fault, not a result, so "
        "the run that needed it recorded nothing",
        f"TIP: free some space in {tempfile.gettempdir()} (TMPDIR) and in the project's reports folder, then run the "
        "same command again"]
