"""A report's block that never ends: triage says it is running and until when, and ``--timeout`` sets the limit.

Was: nothing on the console for the whole 1800 s default (the runs' output is
kept off it), and ``triage`` had no ``--timeout``.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from kit.errors import UsageError
from kit.config import Matrix, parse_matrix
from kit.check_settings import DEFAULT_TIMEOUT_S
from kit.triage import command, progress
from kit.triage import triage as flow
from kit.triage.check_writer import WrittenCheck


@pytest.fixture
def matrix(tmp_path: Path) -> Matrix:
    return parse_matrix({"kit": {"results_dir": str(tmp_path / "reports" / "results")},
                         "release": [{"version": "0.6.0"}], "checks": {"scaling": {}}}, tmp_path / "matrix.toml")


def test_a_run_still_going_says_so_and_names_its_limit(monkeypatch: pytest.MonkeyPatch, matrix: Matrix,
                                                         tmp_path: Path) -> None:
    limits: list[int] = []

    def slow_run(matrix: Matrix, request: Any, log: Any) -> tuple[dict[str, Any], Path]:
        limits.append(request.script.timeout_s)
        time.sleep(2.6)  # a block still going: the lines come from another thread meanwhile
        return {"status": "timed-out", "reason": "the script did not finish within 20 s"}, tmp_path / "r.json"

    monkeypatch.setattr(flow, "run_check", slow_run)
    monkeypatch.setattr(progress, "EVERY_S", 1.0)
    (tmp_path / "capture.py").write_text("while True: pass\n")
    said: list[str] = []
    options = flow.TriageOptions(source="issue.md", text="", timeout_s=20)
    flow.run_on(matrix, options, WrittenCheck(tmp_path / "capture.py", ""), "issue", "0.6.0", None, said.append)
    assert limits == [20]
    assert said[0] == "jax 0.6.0: running the block (stopped at 20 s; --timeout SECONDS sets another limit)"
    still = [line for line in said if "still running after" in line]
    assert still and still[0] == ("jax 0.6.0: still running after 1 s (stopped at 20 s; --timeout SECONDS sets "
                                  "another limit)")


def test_triage_takes_timeout_and_refuses_a_bad_one(monkeypatch: pytest.MonkeyPatch, matrix: Matrix,
                                                    tmp_path: Path) -> None:
    given: list[flow.TriageOptions] = []
    monkeypatch.setattr(command, "triage", lambda matrix, options, log: given.append(options) or
                        type("R", (), {"bisect_argv": []})())
    monkeypatch.setattr(command, "answer_lines", lambda result: [])
    report = tmp_path / "issue.md"
    report.write_text("```python\nimport jax\n```\n")
    command.main(matrix, [str(report), "--timeout", "90"], lambda line: None)
    command.main(matrix, [str(report)], lambda line: None)
    assert [o.timeout_s for o in given] == [90, DEFAULT_TIMEOUT_S]
    with pytest.raises(UsageError, match="argument --timeout: must be a whole number of seconds"):
        command.main(matrix, [str(report), "--timeout", "0"], lambda line: None)
