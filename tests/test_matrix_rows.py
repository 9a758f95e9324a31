"""kit.matrix.rows: a named environment gets its own row under the releases; no interpreter's record moves the answer."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from kit.matrix.markdown import render_rows
from kit.matrix.model import build_report
from kit.matrix.report import write_report
from kit.records import load_records
from tests.record_samples import CONFIGURED, FIXTURES, answer_section

SWEEP = FIXTURES / "cpu-laptop-sweep"
PACKAGES = {"jax": "0.4.35", "jaxlib": "0.4.35", "numpy": "2.1.3", "scipy": "1.14.1", "ml-dtypes": "0.5.1"}


def _existing(fixture: str, name: str | None, interpreter: str, **fields: Any) -> dict[str, Any]:
    """A fixture record as if run with an existing interpreter (``--python``, or the environment ``name``)."""
    record = json.loads((SWEEP / fixture).read_text())
    record["install"] = {"environment": "existing", "interpreter": interpreter, "name": name, "python": "3.13.0",
                         "packages": PACKAGES, "packages_fingerprint": "0123456789abcdef"}
    record["requested"] = {**record["requested"], "python": interpreter, "environment": name}
    record["reproduce"] = f"nox -s {record['check']}-{name}" if name else f"python -m kit run --python {interpreter}"
    record.update(fields)
    return record


def test_a_named_environment_gets_a_row_and_no_interpreter_moves_theanswer_section(tmp_path: Path) -> None:
    results = tmp_path / "results"
    shutil.copytree(SWEEP, results)
    before = write_report(results, tmp_path / "before", plots=False, configured=CONFIGURED, environments=["mine"])
    # Someone's own 0.6.0 that is affected (say, patched), and the environment `mine` holding 0.4.35.
    added = {
        "adhoc-scaling.json": _existing("scaling-0.6.0-unaffected.json", None, "/opt/other/bin/python",
                                        verdict="affected", created="2026-11-30T00:00:00Z"),
        "mine-scaling.json": _existing("scaling-0.4.35-affected.json", "mine", "/home/me/venv/bin/python",
                                       created="2026-11-30T00:00:00Z"),
        "mine-correctness.json": _existing("correctness-0.4.35-unaffected.json", "mine", "/home/me/venv/bin/python",
                                           created="2026-11-30T00:00:00Z"),
    }
    for name, record in added.items():
        (results / name).write_text(json.dumps(record))
    after = write_report(results, tmp_path / "after", plots=False, configured=CONFIGURED, environments=["mine"])
    md = after.markdown.read_text()

    assert answer_section(md) == answer_section(before.markdown.read_text())
    assert [row.release for row in after.report.rows] == [row.release for row in before.report.rows]
    [row] = after.report.environment_rows
    assert (row.environment, row.release, row.install) == ("mine", "0.4.35", "existing: /home/me/venv/bin/python")
    assert row.versions == "jax 0.4.35, jaxlib 0.4.35, numpy 2.1.3, scipy 1.14.1"
    assert {check: finding.verdict for check, finding in row.findings.items()} == {
        "scaling": "affected", "correctness": "unaffected"}
    table = md.split("## Matrix", 1)[1].split("Records produced on", 1)[0]
    last = [line for line in table.splitlines() if line.startswith("|")][-1]
    assert last.startswith("| **mine** (your environment: jax 0.4.35, jaxlib 0.4.35, numpy 2.1.3, scipy 1.14.1) | cpu |")
    assert "`nox -s scaling-mine`" in last
    assert "with `--python /opt/other/bin/python`: 2026-11-30T00:00:00Z, ran, verdict affected" in md


def test_without_its_name_in_matrix_toml_an_environment_s_records_are_ad_hoc() -> None:
    record = _existing("scaling-0.4.35-affected.json", "mine", "/home/me/venv/bin/python")
    report = build_report([record], configured=CONFIGURED, known_problems=[])
    assert report.environment_rows == []
    assert report.rows == []
    assert report.backends == []
    assert [run.differs for run in report.ad_hoc] == ["environment mine (/home/me/venv/bin/python)"]


def test_an_environment_s_newest_record_wins_across_an_upgrade() -> None:
    older = _existing("scaling-0.4.35-affected.json", "mine", "/v/bin/python", created="2026-11-30T00:00:00Z")
    newer = _existing("scaling-0.6.0-unaffected.json", "mine", "/v/bin/python", created="2026-11-30T06:00:00Z")
    newer["install"]["packages"] = {**PACKAGES, "jax": "0.6.0", "jaxlib": "0.6.0"}
    report = build_report([older, newer], configured=CONFIGURED, known_problems=[], environments=["mine"])
    [row] = report.environment_rows
    assert (row.release, row.findings["scaling"].verdict) == ("0.6.0", "unaffected")
    assert row.versions.startswith("jax 0.6.0, jaxlib 0.6.0")
    assert len(report.older) == 1
    assert report.record_count == 2


def test_a_named_environment_without_jax_shows_why() -> None:
    record = _existing("scaling-0.4.35-affected.json", "mine", "/v/bin/python", status="not-installable",
                       verdict=None, reason="/v/bin/python has no jax or jaxlib installed")
    record["install"]["packages"] = {"numpy": "2.1.3"}
    report = build_report([record], configured=CONFIGURED, known_problems=[], environments=["mine"])
    [row] = report.environment_rows
    assert row.install == "not installable: /v/bin/python has no jax or jaxlib installed"
    assert row.versions == "jax absent, jaxlib absent, numpy 2.1.3, scipy absent"
    assert "| **mine** (your environment: jax absent" in "\n".join(render_rows(report))


def test_fixture_records_are_all_the_kit_s_own() -> None:
    # The rows above are told apart by install.environment alone; no shipped record has it as existing.
    assert all((e.record.get("install") or {}).get("environment") != "existing" for e in load_records(FIXTURES).entries)
