"""kit.bisect.report: reports name files relative to the project, never by a machine's absolute path."""

from __future__ import annotations

import re
from pathlib import Path

from kit.bisect.options import shown_path

ROOT = Path(__file__).resolve().parent.parent

# Where a checkout lives on the machines this kit runs on: none of it belongs in a committed report.
ABSOLUTE = re.compile(r"(?<![\w.])/(?:work|home|root|tmp|Users|private|var)/")


def test_a_script_is_named_relative_to_the_project(tmp_path: Path) -> None:
    inside = tmp_path / "examples" / "repro.py"
    assert shown_path(inside, tmp_path) == "examples/repro.py"
    assert shown_path(Path("/elsewhere/repro.py"), tmp_path) == "/elsewhere/repro.py"  # as the user gave it


def test_committed_reports_hold_no_absolute_path() -> None:
    for report in sorted((ROOT / "reports").glob("*.md")) + sorted((ROOT / "reports").glob("*.json")):
        found = ABSOLUTE.findall(report.read_text(encoding="utf-8"))
        assert not found, f"{report.name} holds an absolute path ({found[0]}...)"
