"""Odd result files (docs/faults.md, "Result files"): whatever a script leaves in KIT_RESULT or a repro in
RESULT.json, the run ends `crashed` with one sentence and a record, never a traceback."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from kit import records
from kit.install.environment import REUSED, Environment
from kit.run import multiprocess, result_files, runner
from tests.faults.script_checks import run_script_check

DEEP = "[" * 100_000 + "]" * 100_000

# Each script makes KIT_RESULT (os.environ["KIT_RESULT"]) odd in its own way, then exits 0.
ODD_KIT_RESULTS = {
    "not-utf8": ("open(path, 'wb').write(b'\\xff\\xfe{\"verdict\": \"affected\"}')",
                 "KIT_RESULT is not UTF-8 text (byte 0xff at offset 0)"),
    "a-folder": ("os.mkdir(path)", "KIT_RESULT is a folder, not a file"),
    "nested-100000-deep": (f"open(path, 'w').write('{{\"summary\": ' + {DEEP!r} + '}}')",
                           "KIT_RESULT: nested too deeply to read (the kit reads up to 64 levels)"),
    "nested-100-deep": ("open(path, 'w').write('{\"environment\": {\"x\": ' + '[' * 100 + ']' * 100 + '}}')",
                        "KIT_RESULT: nested more than 64 levels deep (the kit reads up to 64)"),
    "a-named-pipe": ("os.mkfifo(path)", "KIT_RESULT is not a regular file (a pipe, a device or a socket)"),
    "huge": ("open(path, 'w').write('{\"reason\": \"' + 'x' * 5_000_000 + '\"}')",
             "KIT_RESULT holds 5.0 MB, more than the 4.0 MB a result may hold"),
    "a-list": ("open(path, 'w').write('[1, 2]')", "KIT_RESULT must hold a JSON object, not an array"),
    "environment-not-an-object": ("open(path, 'w').write('{\"environment\": [1]}')",
                                  "KIT_RESULT environment must be an object"),
    "a-5000-digit-integer": ("open(path, 'w').write('{\"summary\": {\"n\": ' + '9' * 5000 + '}}')",
                             "KIT_RESULT: not usable JSON: Exceeds the limit (4300"),  # "(4300 digits)" from 3.11
    "torn": ("open(path, 'w').write('{\"verdict\": \"aff')",
             "KIT_RESULT: not valid JSON (truncated or corrupt?): Unterminated string"),
}


@pytest.mark.parametrize("case", sorted(ODD_KIT_RESULTS))
def test_an_odd_kit_result_is_a_crash_with_one_sentence_and_a_record(tmp_path: Path, case: str) -> None:
    make, sentence = ODD_KIT_RESULTS[case]
    record, path = run_script_check(tmp_path, f"import os\npath = os.environ['KIT_RESULT']\n{make}\n")
    assert record["status"] == "crashed"
    assert record["verdict"] is None
    assert record["reason"].startswith(sentence)
    assert "\n" not in record["reason"]
    assert path.is_file()
    assert path.stat().st_size < 100_000
    assert records.load_records(path.parent).records[0]["reason"] == record["reason"]


@pytest.mark.real_time  # waits out a real time limit
def test_a_torn_kit_result_after_a_timeout_still_reads_timed_out(tmp_path: Path) -> None:
    body = "import os, time\nopen(os.environ['KIT_RESULT'], 'w').write('{\"verd')\ntime.sleep(60)\n"
    record, _path = run_script_check(tmp_path, body, timeout_s=2)
    assert record["status"] == "timed-out"


def _fake_repro(tmp_path: Path, make: str) -> Environment:
    """A 'python' that, run as `python -m repro.X --out PATH ...`, makes PATH odd and exits 0."""
    fake = tmp_path / "python"
    fake.write_text(f"#!{sys.executable}\nimport os, sys\npath = sys.argv[sys.argv.index('--out') + 1]\n{make}\n")
    fake.chmod(0o755)
    return Environment(fake, {}, REUSED)


@pytest.mark.parametrize("case", ["not-utf8", "a-folder", "nested-100000-deep", "a-named-pipe", "huge"])
def test_an_odd_result_json_from_the_repro_is_a_crash_that_says_why(tmp_path: Path, case: str) -> None:
    make, sentence = ODD_KIT_RESULTS[case]
    fields = runner._run_repro(_fake_repro(tmp_path, make), runner.RunRequest("scaling", "0.6.0"), {}, 60,
                               lambda _m: None)
    assert fields.status == "crashed"
    assert fields.reason == "the repro exited 0, but " + sentence.replace("KIT_RESULT", "its result.json")


@pytest.mark.parametrize("case", ["not-utf8", "a-folder", "nested-100000-deep", "huge"])
def test_an_odd_per_process_result_is_named_in_the_merged_crash(tmp_path: Path, case: str) -> None:
    out = tmp_path / "result.json"
    good = {"verdict": "unaffected", "evidence": {"summary": {}}, "process": {"process_index": 0}}
    multiprocess.result_path(out, 0).write_text(json.dumps(good))
    make, sentence = ODD_KIT_RESULTS[case]
    maker = tmp_path / "make.py"
    maker.write_text(f"import os\npath = {str(multiprocess.result_path(out, 1))!r}\n{make}\n")
    subprocess.run([sys.executable, str(maker)], check=True)
    fields = multiprocess.merge(out, 2, [0, 0], [])
    assert fields.status == "crashed"
    assert sentence.replace("KIT_RESULT", "result.p1.json") in fields.reason


def test_reading_refuses_before_reading_whole(tmp_path: Path) -> None:
    link = tmp_path / "zero.json"
    link.symlink_to("/dev/zero")
    with pytest.raises(result_files.ResultFileError, match="not a regular file"):
        result_files.read_json_object(link, "KIT_RESULT")
    assert result_files.read_json_object(tmp_path / "absent.json", "KIT_RESULT") is None


def test_a_repro_that_dies_of_a_full_tmpdir_blames_the_machine_not_the_release(tmp_path: Path) -> None:
    # TMPDIR on a full tmpfs: the repro's own write of RESULT.json there raised ENOSPC, and the record said
    # "the repro crashed (exit code 1): OSError: [Errno 28] No space left on device" against jax 0.6.0.
    from kit.errors import MachineUnwritable

    full = _fake_repro(tmp_path, "raise OSError(28, 'No space left on device')")
    with pytest.raises(MachineUnwritable) as refused:
        runner._run_repro(full, runner.RunRequest("scaling", "0.6.0"), {}, 60, lambda _m: None)
    assert str(refused.value).startswith("the repro could not write (No space left on device), its result going to ")
    assert "not the release's, so no record was kept" in str(refused.value)
    assert refused.value.tip.startswith("free some space in ")

