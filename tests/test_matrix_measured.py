"""kit.matrix.measured: a check that only measures is shown as measured and never moves the answer."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from kit.matrix.markdown import render_markdown
from kit.matrix.measured import measured_only, measuring_checks
from kit.matrix.model import build_report
from kit.records import LoadedRecord

METRICS = {"solve_ms": {"unit": "ms", "samples": [4.0, 4.1], "better": "lower"}}


def record(check: str, jax: str, verdict: str, **fields: Any) -> LoadedRecord:
    data = {"schema": 1, "check": check, "requested": {"jax": jax, "backend": "cpu"}, "status": "ran",
            "verdict": verdict, "reason": "", "host": {"machine_id": "m"}, "created": "2026-01-01T00:00:00Z",
            **fields}
    return LoadedRecord(Path(f"{check}-{jax}.json"), data)


def timing(jax: str, **evidence: Any) -> LoadedRecord:
    """A user's timing script: metrics, exit 0, no verdict of its own."""
    return record("timing", jax, "unaffected", metrics=METRICS, evidence={"exit_code": 0, "summary": {}, **evidence})


def test_a_run_that_only_measured_is_told_from_one_that_judged() -> None:
    assert measured_only(timing("0.6.0").record)
    assert not measured_only(timing("0.6.0", verdict_from="result").record)  # KIT_RESULT said unaffected itself
    assert not measured_only(record("timing", "0.6.0", "unaffected", evidence={"exit_code": 0}).record)  # no metrics
    assert not measured_only(record("scaling", "0.6.0", "unaffected", metrics=METRICS, evidence={}).record)
    assert measuring_checks([timing("0.6.0"), timing("0.12.0.1")]) == {"timing"}
    affected = record("timing", "0.4.35", "affected", metrics=METRICS, evidence={"exit_code": 1})
    assert measuring_checks([timing("0.6.0"), affected]) == set()  # one run that judged makes it a judging check


def test_a_measuring_check_never_moves_the_answer() -> None:
    # Once, a metric-only user check on 0.6.0 moved "newest measured that passes" from 0.12.0.1 to 0.6.0.
    scaling = [record("scaling", v, "unaffected") for v in ("0.6.0", "0.12.0.1")]
    report = build_report([*scaling, timing("0.6.0")], known_problems=[])
    answer = report.backends[0]
    assert answer.checks == ["scaling"]
    assert answer.newest_passing == "0.12.0.1"
    assert report.measured_only == ["timing"]
    markdown = render_markdown(report)
    row = next(line for line in markdown.splitlines() if line.startswith("| 0.6.0 "))
    assert "| measured |" in row
    assert "unaffected |" in row  # timing measured, scaling unaffected
    assert "`timing` only measure" in markdown
