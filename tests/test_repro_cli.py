"""repro/cli.py: a repro's command line (defaults, then preset, then flags) and its result file."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from repro.cli import UsageError, checked_parameters, parser, write_result
from repro.parameters import DEFAULTS, PRESETS


def _parse(check: str, *argv: str) -> tuple[str, dict]:
    return checked_parameters(check, parser(check, "test"), ["--out", "r.json", *argv])


def test_no_flags_give_the_defaults_and_no_preset() -> None:
    out, parameters = _parse("scaling")
    assert out == "r.json"
    assert parameters == {**DEFAULTS["scaling"], "preset": None}


def test_a_preset_overrides_the_defaults_and_a_flag_overrides_the_preset() -> None:
    # The order matters: a flag given with --preset must win, or `--preset thread --batch 4096` runs 8192.
    _, parameters = _parse("scaling", "--preset", "thread", "--batch", "4096")
    assert parameters["batch"] == 4096
    assert parameters["preset"] == "thread"
    assert parameters["hidden"] == PRESETS["scaling"]["thread"]["hidden"]
    assert parameters["repeats"] == DEFAULTS["scaling"]["repeats"]


def test_flags_arrive_in_their_normal_form() -> None:
    _, parameters = _parse("scaling", "--devices", "4,1,2,2")
    assert parameters["devices"] == [1, 2, 4]


def test_the_defaults_are_not_changed_by_a_parse() -> None:
    # A shared dict mutated by one parse would leak into the next repro run in the same process (the tests).
    before = json.dumps(DEFAULTS, sort_keys=True)
    _parse("correctness", "--batches", "1000", "--dtypes", "float64")
    assert json.dumps(DEFAULTS, sort_keys=True) == before


@pytest.mark.parametrize("argv, message", [
    ([], "the following arguments are required: --out"),
    (["--out", "r.json", "--preset", "nope"], "argument --preset: invalid choice: 'nope'"),
    (["--out", "r.json", "--no-such-flag", "1"], "unrecognized arguments: --no-such-flag 1"),
])
def test_a_bad_command_line_is_one_usage_error(argv: list[str], message: str) -> None:
    # No usage dump and no SystemExit: the repro prints one `error:` line and exits 2 itself.
    with pytest.raises(UsageError) as raised:
        checked_parameters("scaling", parser("scaling", "test"), argv)
    assert str(raised.value).startswith(message)
    assert "\n" not in str(raised.value)


def test_values_that_break_a_rule_between_them_are_refused_with_the_first_problem() -> None:
    with pytest.raises(UsageError, match="^--batch 4095 does not split evenly over 2 devices"):
        _parse("scaling", "--devices", "2", "--batch", "4095")


def test_the_result_file_is_strict_json_in_the_given_order(tmp_path: Path) -> None:
    path = tmp_path / "deep" / "er" / "RESULT.json"  # folders that do not exist yet are made
    write_result(str(path), {"verdict": "affected", "b": float("nan"), "a": [float("inf")]})
    text = path.read_text()
    assert list(json.loads(text)) == ["verdict", "b", "a"]  # not sorted: the repro's own order
    assert json.loads(text) == {"verdict": "affected", "b": None, "a": [None]}
    assert [p.name for p in path.parent.iterdir()] == ["RESULT.json"]  # no temporary file left


def test_the_result_file_replaces_an_old_one_whole(tmp_path: Path) -> None:
    path = tmp_path / "RESULT.json"
    path.write_text('{"old": "' + "x" * 1000 + '"}')
    write_result(str(path), {"new": 1})
    assert json.loads(path.read_text()) == {"new": 1}


def test_a_bare_file_name_is_written_in_the_working_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # dirname("RESULT.json") is "": the folder to make must be the working one, not "" (an error).
    monkeypatch.chdir(tmp_path)
    write_result("RESULT.json", {"ok": True})
    assert json.loads((tmp_path / "RESULT.json").read_text()) == {"ok": True}
    assert os.listdir(tmp_path) == ["RESULT.json"]


def test_exit_now_flushes_the_output_and_skips_the_teardown() -> None:
    code = ("import atexit, sys; from repro.cli import exit_now; atexit.register(lambda: print('teardown')); "
            "print('result written', end=''); sys.stderr.write('last line'); exit_now(3)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                          cwd=Path(__file__).resolve().parent.parent)
    assert (done.returncode, done.stdout, done.stderr) == (3, "result written", "last line")
