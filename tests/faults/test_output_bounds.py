"""One long output line (docs/faults.md, "Output"): records, console lines, reasons and matrix cells stay
small and say what was cut; the pipe is read in chunks, so the kit never holds the whole line."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from kit.matrix.report import write_report
from kit.text_bounds import CELL_CHARS, LINE_ECHO_BYTES, REASON_CHARS, cut, human_size
from tests.faults.script_checks import run_script_check

ROOT = Path(__file__).resolve().parents[2]

ONE_LINE = "import sys, time\nsys.stdout.write('x' * {size} + '\\n')\nsys.stdout.flush()\n"


def _longest_line(text: str) -> int:
    return max((len(line) for line in text.splitlines()), default=0)


def test_a_20_mb_line_then_a_kill_keeps_a_small_record_and_console(tmp_path: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    body = ONE_LINE.format(size=20_000_000) + "time.sleep(60)\n"
    record, path = run_script_check(tmp_path, body, timeout_s=3)
    assert record["status"] == "timed-out"
    assert path.stat().st_size < 100_000
    assert record["evidence"]["output_tail"][-1].endswith("… [cut 20.0 MB]")
    console = capsys.readouterr().out
    assert "… [cut 20.0 MB]" in console
    assert _longest_line(console) < LINE_ECHO_BYTES + 100


def test_a_50_mb_line_and_exit_1_keeps_a_small_record(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    record, path = run_script_check(tmp_path, ONE_LINE.format(size=50_000_000) + "sys.exit(1)\n")
    assert (record["status"], record["verdict"]) == ("ran", "affected")
    assert path.stat().st_size < 100_000
    assert record["evidence"]["output_tail"][-1].endswith("… [cut 50.0 MB]")
    assert _longest_line(capsys.readouterr().out) < LINE_ECHO_BYTES + 100


def test_a_crash_after_a_long_line_gives_a_short_reason(tmp_path: Path) -> None:
    record, _path = run_script_check(tmp_path, ONE_LINE.format(size=3_000_000) + "import os\nos.abort()\n")
    assert record["status"] == "crashed"
    assert record["reason"].startswith("the script was killed by signal 6: xxx")
    assert len(record["reason"]) < REASON_CHARS + 30
    assert record["reason"].endswith("]")


def test_a_long_reason_in_kit_result_is_cut_in_the_record(tmp_path: Path) -> None:
    body = ("import json, os\njson.dump({'reason': 'r' * 3_000_000, 'summary': {'note': 'n' * 3_000_00}},"
            " open(os.environ['KIT_RESULT'], 'w'))\n")
    record, path = run_script_check(tmp_path, body)
    assert record["reason"] == cut("r" * 3_000_000, REASON_CHARS)
    assert record["reason"].endswith("… [cut 3.0 MB]")
    assert path.stat().st_size < 100_000


READ_ONE_LONG_LINE = """
import resource, sys
from kit.run import child_processes
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
ended = child_processes.run([sys.executable, "-c", "print('x' * 50_000_000)"], {}, 60, echo=None)
after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(ended.code, (after - before) // 1024)
"""


def test_reading_a_50_mb_line_does_not_hold_it_in_memory() -> None:
    done = subprocess.run([sys.executable, "-c", READ_ONE_LONG_LINE], cwd=ROOT, capture_output=True, text=True,
                          check=True)
    code, grown_mb = (int(x) for x in done.stdout.split())
    assert code == 0
    assert grown_mb < 20, f"reading the line grew the kit by {grown_mb} MB"


FIXTURE_CATALOGUE = Path(__file__).resolve().parents[1] / "fixtures" / "known"


def test_an_old_record_with_a_huge_reason_gives_a_small_matrix(tmp_path: Path) -> None:
    results = tmp_path / "results"
    results.mkdir()
    record = {"schema": 1, "kit_version": "0.1.0", "check": "hostile", "requested": {"jax": "0.6.0", "backend": "cpu"},
              "status": "crashed", "verdict": None, "reason": "the script was killed by signal 9: " + "x" * 20_000_000,
              "environment": {"jax": "0.6.0", "backend": "cpu"}, "install": {}, "parameters": {}, "evidence": {},
              "host": {"name": "h", "machine_id": "m"}, "created": "2026-01-01T00:00:00Z"}
    (results / "hostile-0.6.0.json").write_text(json.dumps(record))
    # The catalogue of known problems a fixed two entries: the bound is on what the record makes of the page.
    written = write_report(results, tmp_path / "out", plots=False, catalogue=FIXTURE_CATALOGUE)
    assert written.markdown.stat().st_size < 50_000, human_size(written.markdown.stat().st_size)
    assert written.json.stat().st_size < 50_000
    row = next(line for line in written.markdown.read_text().splitlines() if "killed by signal 9" in line)
    assert "… [cut 20.0 MB]" in row
    assert len(row) < CELL_CHARS + 500
