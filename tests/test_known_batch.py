"""Several catalogue checks in one interpreter: each read as `python SCRIPT` would exit, the results kept as they come."""

from __future__ import annotations

from pathlib import Path

import pytest

from kit.known.batch import _measurement
from kit.known.measured import Outcome
from repro.known_batch import run_one


@pytest.mark.parametrize(("body", "code"), [("x = 1\n", 0), ("import sys\nsys.exit(3)\n", 3),
                                            ("raise ValueError('no')\n", 1), ("import sys\nsys.exit('bye')\n", 1),
                                            ("import sys\nsys.exit(None)\n", 0), ("import sys\nsys.exit(125)\n", 125)])
def test_a_script_exits_in_the_batch_as_it_would_alone(tmp_path: Path, body: str, code: int) -> None:
    script = tmp_path / "check.py"
    script.write_text(body)
    assert run_one(str(script))["exit"] == code


def test_a_script_runs_as_main_with_its_own_argv_and_its_output_is_kept(tmp_path: Path) -> None:
    script = tmp_path / "check.py"
    script.write_text("import sys\nprint(__name__, sys.argv)\nraise RuntimeError('boom')\n")
    result = run_one(str(script))
    assert result["tail"][0] == f"__main__ ['{script}']"
    assert result["tail"][-1] == "RuntimeError: boom"
    assert result["exit"] == 1


@pytest.mark.parametrize(("code", "outcome"), [(0, Outcome.ABSENT), (1, Outcome.PRESENT), (125, Outcome.UNTESTED),
                                               (127, Outcome.PRESENT), (200, Outcome.UNTESTED), (None, Outcome.UNTESTED)])
def test_the_script_protocol_reads_a_batch_result(code: object, outcome: Outcome) -> None:
    said = _measurement({"exit": code, "tail": ["last line"]}, "0.4.35", "cpu")
    assert said.outcome is outcome
    assert said.reason.endswith("last line")
