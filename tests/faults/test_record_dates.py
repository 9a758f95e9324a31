"""A record dated in the future is unusable, with one reason: as the newest of its cell it pinned the cell forever.

docs/faults.md, "Untrusted input and the kit's folders".
"""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone
from pathlib import Path

from kit.matrix.report import write_report
from kit.records import load_records
from tests.record_samples import make_record


def _stamp(when: datetime) -> str:
    return when.strftime("%Y-%m-%dT%H:%M:%SZ")


def test_a_record_dated_in_the_future_is_skipped_so_a_fresh_run_decides_the_cell(tmp_path: Path) -> None:
    results = tmp_path / "results"
    results.mkdir()
    now = datetime.now(timezone.utc)
    (results / "future.json").write_text(json.dumps(make_record(created="2999-01-01T00:00:00Z", verdict="affected")))
    (results / "fresh.json").write_text(json.dumps(make_record(created=_stamp(now), verdict="unaffected",
                                                               evidence={"summary": {"all_gathers": 0}})))
    (results / "skewed.json").write_text(json.dumps(make_record(created=_stamp(now + timedelta(hours=2)),
                                                                check="correctness", verdict="unaffected")))
    loaded = load_records(results)
    assert sorted(entry.path.name for entry in loaded.entries) == ["fresh.json", "skewed.json"], "a skewed clock is fine"
    [(name, reason)] = [(bad.path.name, bad.reason) for bad in loaded.unusable]
    assert name == "future.json"
    assert reason.startswith("dated '2999-01-01T00:00:00Z', ahead of this machine's clock (")
    assert reason.endswith("): as the newest of its cell it would hide every later run")
    markdown = write_report(results, tmp_path / "out", plots=False).markdown.read_text()
    [row] = [line for line in markdown.splitlines() if line.startswith("| 0.4.35")]
    assert "unaffected" in row
    assert "**affected**" not in row
