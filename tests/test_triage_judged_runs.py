"""kit/triage/judged_runs.py: triage's runs judged by the check it wrote, as the bisect that follows takes them.

What is checked: the verdict is the one the written check itself gives the same outcome (the check runs here, on
a block that needs no JAX); the check named is the one the bisect's probe names (`kit.bisect.probe.cache`); the
capture that ran stays at the path its records name, apart from the check; runs that showed nothing are left out.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from kit.bisect.options import parse_options
from kit.bisect.run_spec import run_spec
from kit.config import Matrix, parse_matrix
from kit.triage import block_outcome
from kit.triage import triage as flow
from kit.triage.check_writer import BEHAVES_AS_REPORTED, DIFFERENCE_BAD_IF, Judged, outcome_check_text, write_check
from kit.triage.difference import Run
from kit.triage.issue_text import Block
from kit.triage.judged_runs import check_subject, judged_runs
from tests.fake_index import refused_url

BAD, GOOD = block_outcome.outcome(0, "eager: 2\njit: 0\n"), block_outcome.outcome(0, "eager: 2\njit: 2\n")
JUDGED = Judged(BAD, GOOD, tuple(block_outcome.features(BAD, GOOD)), "0.6.0", "0.9.0")


def _matrix(tmp_path: Path) -> Matrix:
    return parse_matrix({"kit": {"results_dir": str(tmp_path / "reports" / "results")},
                         "install": {"index_url": refused_url()}, "release": [{"version": "0.6.0"}],
                         "checks": {"scaling": {}}}, tmp_path / "matrix.toml")


def _check(tmp_path: Path, printed: str) -> Path:
    block = Block(1, "python", f"print({printed!r}, end='')", 1)
    return write_check(tmp_path / "checks", "issue-1a2b3c", outcome_check_text(block, "Triage check", [], JUDGED),
                       DIFFERENCE_BAD_IF).path


def _record(version: str) -> dict[str, Any]:
    return {"status": "ran", "identity": {"subject": {}}, "reproduce": "python -m kit triage issue.md --run",
            "parameters": {"script": "reports/triage/captures/issue-1a2b3c.py", "script_sha256": "a" * 64}}


@pytest.mark.parametrize(("printed", "code"), [("eager: 2\njit: 0\n", 1), ("eager: 2\njit: 2\n", 0),
                                               ("eager: 2\njit: 7\n", 125)])
def test_the_verdict_is_the_one_the_written_check_gives_the_same_outcome(tmp_path: Path, printed: str,
                                                                        code: int) -> None:
    check = _check(tmp_path, printed)
    done = subprocess.run([sys.executable, str(check)], capture_output=True, text=True, timeout=60)
    run = Run("0.6.0", "ran", "", block_outcome.outcome(0, printed), _record("0.6.0"), "reports/triage/records/r.json")
    judged, = judged_runs({"0.6.0": run}, JUDGED, check, DIFFERENCE_BAD_IF, None, tmp_path)
    assert done.returncode == code
    assert judged.reason == "the check's judge on triage's run: " + done.stdout.splitlines()[-1]
    assert judged.verdict == {1: "affected", 0: "unaffected", 125: "inconclusive"}[code]
    assert judged.reason.startswith("the check's judge on triage's run: " + BEHAVES_AS_REPORTED) == (code == 1)


def test_the_check_named_is_the_one_the_bisect_s_probe_runs(tmp_path: Path) -> None:
    matrix, check = _matrix(tmp_path), _check(tmp_path, "jit: 0\n")
    argv = ["--script", str(check), "--bad-if", DIFFERENCE_BAD_IF, "--host-devices", "4", "--good", "0.9.0",
            "--bad", "0.6.0"]
    assert check_subject(check, DIFFERENCE_BAD_IF, 4, tmp_path) == dict(run_spec(matrix, parse_options(matrix, argv).specs.runs).subject)


def test_what_ran_is_said_with_its_record_and_how_to_rerun_it_and_runs_that_showed_nothing_are_left_out(
        tmp_path: Path) -> None:
    check = _check(tmp_path, "jit: 0\n")
    runs = {"0.6.0": Run("0.6.0", "ran", "", BAD, _record("0.6.0"), "reports/triage/records/r.json", "logs/a.log"),
            "0.9.0": Run("0.9.0", "timed-out", "timed out", None, _record("0.9.0")),  # nothing to judge
            "0.5.0": Run("0.5.0", "ran", "", GOOD)}  # stood in for: no record says what ran
    judged, = judged_runs(runs, JUDGED, check, DIFFERENCE_BAD_IF, None, tmp_path)
    assert judged.version == "0.6.0"
    assert judged.log == "logs/a.log"
    assert judged.ran.startswith("triage ran reports/triage/captures/issue-1a2b3c.py (sha256 aaaaaaaaaaaa: the "
                                 "check's block and outcome capture, without its judge) on jax 0.6.0; record "
                                 "reports/triage/records/r.json; its outcome judged afterwards by the judge of "
                                 "checks/issue-1a2b3c.py")
    assert judged.ran.endswith("; reproduce: python -m kit triage issue.md --run")


def test_triage_keeps_the_capture_apart_from_the_check_and_hands_on_the_runs_it_judged(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def run_on(matrix: Any, opts: Any, written: Any, name: str, version: str, devices: Any, log: Any) -> Run:
        printed = {"0.6.0": "eager: 2\njit: 0\n", "0.9.0": "eager: 2\njit: 2\n"}[version]
        record = {**_record(version), "parameters": {"script": str(written.path.relative_to(tmp_path))}}
        return Run(version, "ran", "", block_outcome.outcome(0, printed), record, f"records/{version}.json")

    monkeypatch.setattr(flow, "run_on", run_on)
    text = "```python\nimport jax\nprint('jit:', 0)\n```\nWith jax 0.6.0 it prints:\n```\njit: 0\n```\n"
    result = flow.triage(_matrix(tmp_path), flow.TriageOptions(source="issue.md", text=text, newest="0.9.0"),
                         lambda _m: None)
    capture = tmp_path / "reports" / "triage" / "captures" / f"{result.check.path.stem}.py"
    assert result.check.path.parent == tmp_path / "checks"
    assert capture.exists()
    assert "None, None, [], ('', '')" in capture.read_text()  # the capture is what ran: no references to judge by
    assert "None, None, [], ('', '')" not in result.check.path.read_text()
    assert [(r.version, r.verdict) for r in result.judged_runs] == [("0.6.0", "affected"), ("0.9.0", "unaffected")]
    assert result.judged_runs[0].ran.startswith(f"triage ran reports/triage/captures/{capture.name}")
