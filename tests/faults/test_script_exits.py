"""A script's exit status said as it was (docs/faults.md, "Processes"): an exit above 127 is the script's own
choice, not a signal; a signal is said only when one killed it. Real scripts, run the whole way to a record."""

from __future__ import annotations

import pytest

from kit.run import protocol
from tests.faults.script_checks import run_script_check


def test_sys_exit_200_is_said_as_an_exit_not_a_signal(tmp_path) -> None:
    record, _path = run_script_check(tmp_path, "import sys\nsys.exit(200)\n")
    assert (record["status"], record["verdict"]) == ("crashed", None)
    assert record["reason"] == "the script exited 200 (outside git bisect run's 0-127)"
    assert record["evidence"]["exit_code"] == 200


def test_a_signal_is_said_only_when_one_killed_the_script(tmp_path) -> None:
    record, _path = run_script_check(tmp_path, "import os, signal\nos.kill(os.getpid(), signal.SIGTERM)\n")
    assert record["status"] == "crashed"
    assert record["reason"] == "the script was killed by signal 15"


@pytest.mark.parametrize(("code", "reason"), [
    (128, "the script exited 128 (outside git bisect run's 0-127)"),
    (255, "the script exited 255 (outside git bisect run's 0-127)"),
    (-9, "the script was killed by signal 9"),
])
def test_the_exit_words_for_each_kind_of_ending(code: int, reason: str) -> None:
    assert protocol.exit_observation(code, 10) == ("crashed", None, reason)
