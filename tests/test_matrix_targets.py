"""The matrix's rows for chips compiled for, not run: target records get rows and an answer of their own."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from kit.matrix.markdown import render_markdown
from kit.matrix.model import build_report
from kit.records import LoadedRecord, Record
from kit.targets import parse_target


def _record(release: str, verdict: str | None, status: str = "ran", created: str = "2026-12-05T10:00:00Z",
            target: str = "tpu:v5e:2x2") -> dict[str, Any]:
    return {"schema": 3, "check": "scaling", "requested": {"jax": release, "backend": "tpu"},
            "status": status, "verdict": verdict, "reason": f"{release}: the LU on 4096 of 4096",
            "parameters": {"target": json.dumps(parse_target(target).to_json())},
            "environment": {"jax": release, "backend": "tpu"}, "host": {"machine_id": "m"}, "created": created,
            "reproduce": f"nox -s scaling-{release} -- --target {target}"}


def test_records_compiled_for_a_tpu_get_their_own_rows_and_say_no_release_is_safe_there(tmp_path: Path) -> None:
    records = [_record("0.5.3", "affected"), _record("0.12.0.1", "affected"),
               _record("0.12.0.1", "unaffected", created="2026-12-01T00:00:00Z"),  # older: superseded
               _record("0.4.35", None, status="not-installable")]
    entries = [LoadedRecord(tmp_path / f"r{i}.json", Record.of(r)) for i, r in enumerate(records)]
    report = build_report(entries, configured={"scaling": {}})
    assert [(c.release, c.verdict or c.status) for c in report.targets] == [
        ("0.4.35", "not-installable"), ("0.5.3", "affected"), ("0.12.0.1", "affected")]
    assert report.rows == []  # never the tpu backend's cell: nothing ran on a TPU
    text = render_markdown(report)
    assert "**TPU v5e 2x2 (4 devices)**, `scaling`: no measured release passes (0.5.3, 0.12.0.1 affected)" in text
    assert "| tpu:v5e:2x2 | scaling | 0.12.0.1 | affected, compiled for TPU v5e 2x2 (4 devices), not run |" in text
    assert "| tpu:v5e:2x2 | scaling | 0.4.35 | not-installable |" in text
    assert "`nox -s scaling-0.12.0.1 -- --target tpu:v5e:2x2` |" in text


def test_a_target_release_passing_above_every_affected_one_is_the_pick(tmp_path: Path) -> None:
    records = [_record("0.5.0", "affected"), _record("0.6.0", "unaffected"), _record("0.12.0.1", "unaffected")]
    entries = [LoadedRecord(tmp_path / f"r{i}.json", Record.of(r)) for i, r in enumerate(records)]
    answer = build_report(entries, configured={"scaling": {}}).target_answers[0]
    assert answer.sentence.startswith("lowest measured release passing: 0.6.0 (compiled for it, not run)")


def test_a_target_says_the_checks_it_cannot_answer_and_the_timings_untested(tmp_path: Path) -> None:
    """correctness needs the chip to run: a target's records never answer it, and the page says so."""
    entries = [LoadedRecord(tmp_path / "r.json", Record.of(_record("0.5.3", "affected")))]
    report = build_report(entries, configured={"scaling": {}, "correctness": {}})
    assert [(a.check, a.sentence) for a in report.target_answers[1:]] == [
        ("correctness", "untested: it needs the chip to run, and a target is compiled for, never run"),
        ("timings", "untested: nothing runs on the chip, so nothing is timed")]
    assert ("- **TPU v5e 2x2 (4 devices)**, `correctness`: untested: it needs the chip to run"
            in render_markdown(report))
