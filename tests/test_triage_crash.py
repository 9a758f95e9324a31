"""A crash is a reproducible outcome in triage (issue 58): a report of a segfault got "not reproduced on the
reporter's release (crashed)", no bisect despite ``--run``, exit 0.

Now a report whose text says it crashed (kit/triage/crash_words.py), or a run killed by a signal, makes the crash
an outcome like any other: the difference between a crash and the newest's exception is the check, and the
bisect it proposes counts a probe that crashes as bad (``--crash bad``). The runs are stood in for here (the
flow, not JAX); examples/issues/device-put-none-segfault.md is the real one (jax 0.9.2 segfaults, 0.10.0 raises
"Device cannot be None.", jaxlib's b93ce53378), measured in docs/triage.md.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from kit.config import Matrix, parse_matrix
from kit.records import Status
from kit.triage import block_outcome
from kit.triage import triage as flow
from kit.triage.crash_words import CRASH_BAD_IF, crash_said
from kit.triage.difference import Run, captured, shows_reported
from kit.triage.issue_text import code_blocks
from kit.triage.judged_runs import judged_runs
from kit.triage.report_reading import read_report
from tests.fake_index import refused_url

ISSUES = Path(__file__).resolve().parent.parent / "examples" / "issues"
SEGFAULT = ISSUES / "device-put-none-segfault.md"


def _matrix(tmp_path: Path) -> Matrix:
    return parse_matrix({"kit": {"results_dir": str(tmp_path / "reports" / "results")},
                         "install": {"index_url": refused_url()}, "release": [{"version": "0.9.2"}],
                         "checks": {"scaling": {}}}, tmp_path / "matrix.toml")


CRASHED = block_outcome.crashed(-11)
RAISED = block_outcome.outcome(1, "placing 2 shards\n", RuntimeError("INVALID_ARGUMENT: Device cannot be None."))
CLEAN = block_outcome.outcome(0, "placing 2 shards\n[0. 1. 2. 3.]\n")


def _triage(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, text: str, outcomes: dict[str, Any],
            **options: Any) -> flow.Triage:
    def run_on(matrix: Matrix, opts: Any, written: Any, name: str, version: str, devices: Any, log: Any) -> Run:
        seen = outcomes[version]
        status = "crashed" if seen is not None and block_outcome.is_crash(seen) else "ran"
        return Run(version, status, "stood in", seen)

    monkeypatch.setattr(flow, "run_on", run_on)
    return flow.triage(_matrix(tmp_path), flow.TriageOptions(source="issue.md", text=text, **options),
                       lambda _m: None)


@pytest.mark.parametrize("said", ["Segmentation fault (core dumped)", "Fatal Python error: Segmentation fault",
                                  "fish: Job 1, 'python a.py' terminated by signal SIGSEGV (Address boundary error)",
                                  "Aborted (core dumped)", "F0101 12:00:00 xla/foo.cc:12] Check failed: rank == 2",
                                  "the interpreter segfaults on the second call"])
def test_the_words_a_crash_is_reported_in(said: str) -> None:
    text = f"Running it:\n\n```text\n{said}\n```\n"
    assert crash_said(text, code_blocks(text)) == said


def test_a_crash_named_only_in_the_code_is_no_crash_report() -> None:
    text = "It prints the wrong value.\n\n```python\nimport signal\nsignal.signal(signal.SIGSEGV, print)\n```\n"
    assert crash_said(text, code_blocks(text)) == ""


def test_the_segfault_report_reads_as_a_crash_not_as_a_wrong_value() -> None:
    reading = read_report(SEGFAULT.read_text())
    # Its prose says "the lookup gives `None`": read as a wrong value 'None' before, which no run printed.
    assert reading.failure.wrong_value is None
    assert reading.failure.crash == "Segmentation fault (core dumped)"
    assert reading.failure.sentence() == "a crash: 'Segmentation fault (core dumped)', from the report's text"
    assert reading.bad_if == CRASH_BAD_IF
    assert shows_reported(reading, CRASHED) is True
    assert shows_reported(reading, RAISED) is False


def test_a_run_killed_by_a_signal_is_captured_as_a_crash() -> None:
    record = {"status": Status.CRASHED, "reason": "the script was killed by signal 11",
              "evidence": {"exit_code": -11, "output_tail": ["placing 2 shards"]}}
    run = captured("0.9.2", record)
    assert run.outcome == CRASHED  # was None: a crash said nothing the triage could compare
    assert run.summary() == "killed by signal 11 (SIGSEGV)"
    timed_out = captured("0.9.2", {"status": Status.TIMED_OUT, "evidence": {"exit_code": None}})
    assert timed_out.outcome is None  # a timeout is not a crash
    broken = {**record, "evidence": {**record["evidence"], "jax_cannot_run": {"error": "Segmentation fault at import"}}}
    assert captured("0.9.2", broken).outcome is None  # JAX itself dies there: the block's crash it is not


def test_a_crashed_side_is_told_by_its_exit_and_exception_never_by_lines_it_could_not_hand_back() -> None:
    found = block_outcome.features(CRASHED, CLEAN)
    assert found == [{"what": "exit"}]
    assert block_outcome.describe(CRASHED, CRASHED, CLEAN, found[0]) == "killed by signal 11 (SIGSEGV)"
    found = block_outcome.features(CRASHED, RAISED)
    assert [f["what"] for f in found] == ["exception", "exit"]
    # A probe that raises as the newest did is the good side; another exception is neither (125).
    assert block_outcome.judgement(RAISED, CRASHED, RAISED, found, ("0.9.2", "0.10.0"), "BAD:")[0] == 0
    other = block_outcome.outcome(1, "", ValueError("something else"))
    assert block_outcome.judgement(other, CRASHED, RAISED, found, ("0.9.2", "0.10.0"), "BAD:")[0] == 125


def test_a_segfault_fixed_by_an_exception_is_reproduced_and_bisected_with_crash_bad(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    result = _triage(tmp_path, monkeypatch, SEGFAULT.read_text(), {"0.9.2": CRASHED, "0.10.0": RAISED},
                     newest="0.10.0")
    # Was: "not reproduced on the reporter's release 0.9.2 (crashed)", and no bisect.
    assert result.answer == "reproduced on the reporter's release 0.9.2; fixed by the newest release, 0.10.0"
    assert result.bisect_argv[-6:] == ["--crash", "bad", "--good", "0.10.0", "--bad", "0.9.2"]
    lines = flow.answer_lines(result)
    assert ("   a crash: the report says 'Segmentation fault (core dumped)'; jax 0.9.2 was killed by signal 11 "
            "(SIGSEGV); a crash is an outcome like any other here, so the bisect counts a probe that crashes as bad "
            "(--crash bad)") in lines
    assert "   confirmed: the report's crash ('Segmentation fault (core dumped)') matches the run on 0.9.2, not the " \
           "one on 0.10.0" in lines


def test_a_crash_the_report_does_not_name_is_still_a_crash(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    text = "It stopped working.\n\n```python\nimport jax\nprint(jax.numpy.ones(3))\n```\n\njax 0.9.2\n"
    result = _triage(tmp_path, monkeypatch, text, {"0.9.2": CRASHED, "0.10.0": CLEAN}, newest="0.10.0")
    assert result.crash == "jax 0.9.2 was killed by signal 11 (SIGSEGV)"
    assert "--crash" in result.bisect_argv and result.bisect_argv[-4:] == ["--good", "0.10.0", "--bad", "0.9.2"]


def test_crashing_on_both_releases_is_still_there_and_the_bisect_counts_crashes_as_bad(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    result = _triage(tmp_path, monkeypatch, SEGFAULT.read_text(), {"0.9.2": CRASHED, "0.10.0": CRASHED},
                     newest="0.10.0")
    assert result.answer.startswith("reproduced on the reporter's release 0.9.2; still there in the newest release")
    assert result.check.bad_if == CRASH_BAD_IF  # an exception is another failure: only a crash is the bug
    assert result.bisect_argv[-4:] == ["--crash", "bad", "--bad", "0.10.0"]


def test_a_crashed_run_is_left_to_the_bisect_to_probe(tmp_path: Path) -> None:
    check = tmp_path / "c.py"
    check.write_text("print(1)\n")
    record = {"status": "crashed", "identity": {"jax": "0.9.2"}, "parameters": {}}
    runs = {"0.9.2": Run("0.9.2", "crashed", "", CRASHED, record), "0.10.0": Run("0.10.0", "ran", "", RAISED, record)}
    judged = flow.Judged(CRASHED, RAISED, tuple(block_outcome.features(CRASHED, RAISED)), "0.9.2", "0.10.0")
    kept = judged_runs(runs, judged, check, "(?m)^BEHAVES AS REPORTED:", None, tmp_path)
    assert [run.version for run in kept] == ["0.10.0"]  # the judge never saw the crash: --crash bad counts it



def test_a_crash_the_report_names_but_no_run_here_shows_is_said_untested(tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    result = _triage(tmp_path, monkeypatch, SEGFAULT.read_text(), {"0.9.2": CLEAN, "0.10.0": CLEAN}, newest="0.10.0")
    assert result.bisect_argv == []
    assert result.answer == "behaves the same on 0.9.2 and 0.10.0: no difference to bisect by"
    assert result.details[0] == ("a crash: the report says 'Segmentation fault (core dumped)'; no run here was killed "
                                 "by a signal: the crash is untested here (another platform or build?)")
