"""tests/golden.py itself: the normaliser replaces only what varies, and a golden never passes unread."""

from __future__ import annotations

import socket
import tempfile
from pathlib import Path

import pytest

from tests import golden
from tests.golden import CHECKOUT, assert_golden, normalise


def test_the_normaliser_replaces_what_varies_and_keeps_every_word_number_and_date() -> None:
    pytest_folder = f"{tempfile.gettempdir()}/pytest-of-someone/pytest-12/test_a_report0"
    text = (f"report: {pytest_folder}/reports/bisect-x.md; log {tempfile.gettempdir()}/jax-kit-probe-logs/a.log\n"
            f"script `../../{str(CHECKOUT).lstrip('/')}/repro/scaling.py`, kit at {CHECKOUT}/kit\n"
            "probed 3 releases in 12.3 s (0.4 s of probes), 0 s here; 9 candidate releases, 2 rounds\n"
            "resolved 2026-12-01T15:45:50Z; uploaded 2024-01-21, python 3.11.9, jaxlib 0.5.2\n"
            "http://127.0.0.1:40123/simple has no wheels; reports/bisect/probes/436757910d164b9c/"
            "0123456789abcdef01234567.log\n"
            f"ran on {socket.gethostname()}\n")
    assert normalise(text).splitlines() == [
        "report: <tmp>/reports/bisect-x.md; log <tmp>/jax-kit-probe-logs/a.log",
        "script `<checkout>/repro/scaling.py`, kit at <checkout>/kit",
        "probed 3 releases in <n> s (<n> s of probes), <n> s here; 9 candidate releases, 2 rounds",
        "resolved <time>; uploaded 2024-01-21, python 3.11.9, jaxlib 0.5.2",
        "http://127.0.0.1:<port>/simple has no wheels; reports/bisect/probes/436757910d164b9c/<identity>.log",
        "ran on <host>",
    ]


def test_a_test_folder_under_pytest_xdist_is_the_same_tmp() -> None:
    worker_folder = f"{tempfile.gettempdir()}/pytest-of-someone/pytest-12/popen-gw1/test_a_report0"
    assert normalise(f"report: {worker_folder}/reports/bisect-x.md\n") == "report: <tmp>/reports/bisect-x.md\n"


def test_a_missing_golden_is_written_and_fails_then_the_same_text_passes_and_another_fails(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(golden, "GOLDEN", tmp_path)
    with pytest.raises(pytest.fail.Exception, match="there was none"):
        assert_golden("a.txt", "one line\n")
    assert (tmp_path / "a.txt").read_bytes() == b"one line\n"
    assert_golden("a.txt", "one line\n")
    with pytest.raises(pytest.fail.Exception, match=r"(?s)-one line.*\+one word.*--update-golden"):
        assert_golden("a.txt", "one word\n")
    monkeypatch.setattr(golden, "_update", True)
    with pytest.raises(pytest.fail.Exception, match="--update-golden was given"):
        assert_golden("a.txt", "one word\n")
    assert (tmp_path / "a.txt").read_bytes() == b"one word\n"
