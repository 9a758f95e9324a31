"""Issue 58's held-out trial, report C (tests/data/triage_trial/): a reproduced failure the triage called "not
reproduced (inconclusive)".

The reporter ran Python 3.11, which writes ``'GetAttrKey' object has no attribute 'key'``; the kit's environment
runs Python 3.13, which qualifies a C extension type's name (``'jaxlib._jax.pytree.GetAttrKey' ...``). The run's
chain also holds the reported ``ValueError`` ("During handling of the above exception ..."). The texts are the
trial's own: the report, the 0.10.2 run's log, and the two runs' record evidence (their outcomes and chains).
"""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path
from typing import Any

import pytest

from kit.config import Matrix, parse_matrix
from kit.records import Record
from kit.run.failures import RaisedException, exception_chain
from kit.triage import block_outcome
from kit.triage import triage as flow
from kit.triage.difference import Run, chain_shows_reported, shows_reported
from kit.triage.failure_pattern import bad_if_for, link_pattern
from kit.triage.report_reading import read_report
from tests.fake_index import refused_url

DATA = Path(__file__).resolve().parent / "data" / "triage_trial"
REPORT = (DATA / "prefix-error-getattrkey.md").read_text()
LOG_0_10_2 = (DATA / "prefix-error-getattrkey-f5d8c4-0.10.2.log").read_text()


def _run(version: str) -> Run:
    """The trial's run of the block on ``version``: its outcome and its record's evidence, as the kit kept them."""
    record = json.loads((DATA / f"prefix-error-getattrkey-{version}.evidence.json").read_text())
    outcome = block_outcome.outcome_from_json(json.loads(record["evidence"]["summary"]["triage_outcome"]))
    return Run(version, "affected", "the trial's run", outcome, Record.of(record))


def test_the_reported_exception_matches_the_same_exception_under_python_3_13_by_its_last_name_component() -> None:
    reported = read_report(REPORT).failure
    assert reported.exception is not None and "'GetAttrKey'" in reported.exception.message
    run_3_13 = exception_chain(LOG_0_10_2.splitlines())[-1]
    assert "'jaxlib._jax.pytree.GetAttrKey'" in run_3_13.message
    line = f"{run_3_13.type}: {run_3_13.message}"
    assert re.search("(?m)^" + link_pattern(reported.exception), line)
    # and the other way round: a report from Python 3.13 matches a run on 3.11
    assert re.search("(?m)^" + link_pattern(run_3_13), f"{reported.exception.type}: {reported.exception.message}")
    # a quoted name is still literal in its last component: another class is another failure
    assert not re.search(bad_if_for([reported.exception]), line.replace("GetAttrKey", "DictKey"))
    # only a class's name loses its prefix: a file's name is no class ('model.py' is not 'data.py')
    assert block_outcome.stable_message("no file 'model.py'") != block_outcome.stable_message("no file 'data.py'")
    model = link_pattern(RaisedException("OSError", "no file 'model.py'"))
    assert not re.search("^" + model, "OSError: no file 'data.py'")


def test_the_triage_verdict_on_the_reporters_release_is_affected() -> None:
    reading, run = read_report(REPORT), _run("0.10.2")
    assert shows_reported(reading, run.outcome)  # the last link, by its stable message
    assert chain_shows_reported(reading, run)


def test_each_link_of_the_runs_chain_is_judged_not_only_the_last() -> None:
    reading, run = read_report(REPORT), _run("0.10.2")
    assert run.record is not None
    evidence = json.loads(json.dumps(run.record.to_json()["evidence"]))
    evidence["exception_chain"][-1] = {"type": "RuntimeError", "message": "another link on another build"}
    other_end = dataclasses.replace(run, record=Record.of({"evidence": evidence}))
    assert chain_shows_reported(reading, other_end)  # the ValueError link is the reported one
    assert not chain_shows_reported(reading, _run("0.12.1"))  # the fix's better message is no link of it


def _matrix(tmp_path: Path) -> Matrix:
    return parse_matrix({"kit": {"results_dir": str(tmp_path / "reports" / "results")},
                         "install": {"index_url": refused_url()},
                         "release": [{"version": "0.12.1"}, {"version": "0.10.2"}], "checks": {"scaling": {}}},
                        tmp_path / "matrix.toml")


def test_the_triage_says_reproduced_on_0_10_2(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def run_on(matrix: Matrix, opts: Any, written: Any, name: str, version: str, devices: Any, log: Any) -> Run:
        return _run(version)

    monkeypatch.setattr(flow, "run_on", run_on)
    result = flow.triage(_matrix(tmp_path), flow.TriageOptions(source="issue.md", text=REPORT, newest="0.12.1"),
                         lambda _m: None)
    assert result.answer.startswith("reproduced on the reporter's release 0.10.2"), result.answer
    assert result.verdicts["0.10.2"].startswith("AFFECTED")


def test_an_implicit_chain_is_said_while_handling_not_raised_from() -> None:
    # The report's traceback joins its links by "During handling of the above exception, another exception
    # occurred" (__context__): the trial's console said "raised from", which is `raise ... from` (__cause__).
    said = read_report(REPORT).failure.sentence()
    assert said.startswith("AttributeError: 'GetAttrKey' object has no attribute 'key' (while handling ValueError: "
                           "expected (<class '__main__.Params'>, ('w', 'b'))"), said
    assert "raised from" not in said
