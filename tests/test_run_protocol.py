"""The check protocol (kit/run/protocol.py) and the runner's script runs, with this interpreter standing in
for a release's python: exit codes, KIT_RESULT, forced host devices, timeouts."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from kit.check_settings import script_check
from tests.fake_jax_package import write_fake_jax
from kit.run import protocol, runner, script_runs
from kit.install.environment import REUSED, Environment


@pytest.mark.parametrize(("code", "status", "verdict"), [
    (0, "ran", "unaffected"), (1, "ran", "affected"), (127, "ran", "affected"), (125, "ran", "inconclusive"),
    (-9, "crashed", None), (139, "crashed", None), (None, "timed-out", None),
])
def test_exit_codes_read_as_git_bisect_run(code: int | None, status: str, verdict: str | None) -> None:
    assert protocol.exit_observation(code, 10)[:2] == (status, verdict)


@pytest.mark.parametrize(("result", "problem"), [
    ({"verdict": "bad"}, "verdict 'bad'"),
    ({"summary": {"nested": {"a": 1}}}, "flat object"),
    ({"metrics": {"t": {"samples": []}}}, "non-empty list"),
    ({"metrics": {"t": {"samples": [1.0], "better": "faster"}}}, "better must be"),
    ({"metric": {}}, "unknown key 'metric'"),
])
def test_a_malformed_kit_result_is_named(result: dict, problem: str) -> None:
    with pytest.raises(protocol.ResultError, match=problem):
        protocol.check_result(result)


def test_a_verdict_that_contradicts_the_exit_code_is_a_crash() -> None:
    fields = protocol.observation(0, 10, {"verdict": "affected"})
    assert fields.status == "crashed"
    assert "exited 0" in fields.reason


def _env(tmp_path: Path) -> Environment:
    jax = write_fake_jax(tmp_path / "fake-jax")  # a failed run asks whether JAX itself runs here: it does
    return Environment(python=Path(sys.executable), versions={"jax": "0.6.0"}, obtained=REUSED, pythonpath=(jax,))


def _script(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "check.py"
    path.write_text("import json, os, sys, time\n" + body)
    return path


def test_script_run_takes_the_result_file_and_forced_devices(tmp_path: Path) -> None:
    script = _script(tmp_path, (
        "from repro import kitcheck\n"  # the helper imports: the repo root is on PYTHONPATH
        "n = os.environ['XLA_FLAGS'].split('=')[-1]\n"
        "kitcheck.finish('affected', 'slow', summary={'devices': int(n)},\n"
        "                metrics={'t': kitcheck.metric([3.0, 2.0, 4.0])})\n"))
    fields = script_runs.run_script(_env(tmp_path), script_check("c", script, host_devices=4), "cpu", 60, lambda _m: None)
    assert (fields.status, fields.verdict, fields.reason) == ("ran", "affected", "slow")
    assert fields.evidence["summary"] == {"devices": 4}
    assert fields.metrics == {"t": {"unit": "ms", "samples": [3.0, 2.0, 4.0], "better": "lower"}}
    assert fields.environment["jax"] == "0.6.0"


def test_a_plain_script_with_an_exit_code_is_a_valid_check(tmp_path: Path) -> None:
    fields = script_runs.run_script(_env(tmp_path), script_check("c", _script(tmp_path, "sys.exit(125)\n")), "cpu", 60,
                               lambda _m: None)
    assert (fields.status, fields.verdict) == ("ran", "inconclusive")


@pytest.mark.real_time  # waits out a real time limit
def test_a_script_past_its_timeout_is_timed_out(tmp_path: Path) -> None:
    fields = script_runs.run_script(_env(tmp_path), script_check("c", _script(tmp_path, "time.sleep(30)\n")), "cpu", 1,
                               lambda _m: None)
    assert fields.status == "timed-out"


def test_a_script_killed_by_a_signal_is_a_crash(tmp_path: Path) -> None:
    body = "import signal\nprint('about to die')\nos.kill(os.getpid(), signal.SIGKILL)\n"
    fields = script_runs.run_script(_env(tmp_path), script_check("c", _script(tmp_path, body)), "cpu", 60, lambda _m: None)
    assert fields.status == "crashed"
    assert "signal 9" in fields.reason
    assert "about to die" in fields.reason


def test_a_broken_result_file_is_a_crash_naming_it(tmp_path: Path) -> None:
    body = "open(os.environ['KIT_RESULT'], 'w').write(json.dumps({'verdict': 'maybe'}))\n"
    fields = script_runs.run_script(_env(tmp_path), script_check("c", _script(tmp_path, body)), "cpu", 60, lambda _m: None)
    assert fields.status == "crashed"
    assert "verdict 'maybe'" in fields.reason
