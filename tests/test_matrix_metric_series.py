"""Metrics in the matrix: per release median and spread, a table and a plot per metric."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kit.matrix.markdown import render_markdown
from kit.matrix.metric_series import metric_series, plot_metrics
from kit.matrix.model import build_report
from kit.records import LoadedRecord, Record


def _record(version: str, samples: list[float], check: str = "mine") -> LoadedRecord:
    record = {"schema": 1, "check": check, "status": "ran", "verdict": "unaffected",
              "created": "2026-11-30T00:00:00Z", "requested": {"jax": version, "backend": "cpu"},
              "environment": {"backend": "cpu"}, "host": {"machine_id": "m"},
              "metrics": {"solve_ms": {"unit": "ms", "samples": samples, "better": "lower"}}}
    return LoadedRecord(Path(f"{check}-{version}.json"), record)


def test_series_are_in_version_order_not_text_order() -> None:
    entries = [_record("0.10.0", [3.0, 3.0, 3.0]), _record("0.4.35", [1.0, 2.0, 3.0, 4.0, 5.0]),
               _record("0.9.1", [2.0])]
    (series,) = metric_series(entries)
    assert [p.release for p in series.points] == ["0.4.35", "0.9.1", "0.10.0"]
    first = series.points[0]
    assert (first.median, first.q1, first.q3, first.n) == (3.0, 2.0, 4.0, 5)


def test_matrix_md_has_a_table_per_metric() -> None:
    report = build_report([_record("0.4.35", [10.0, 11.0, 12.0]), _record("0.6.0", [2.0, 2.5, 3.0])])
    text = render_markdown(report)
    assert "**mine** on cpu\n\n| Release | solve_ms (ms) |" in text
    assert "| 0.4.35 | 11 ±5% (3) |" in text
    assert "| 0.6.0 | 2.5 ±10% (3) |" in text
    assert report.to_json()["metrics"][0]["points"][1]["median"] == 2.5


def test_a_record_without_metrics_adds_no_section() -> None:
    entry = _record("0.6.0", [1.0])
    entry = LoadedRecord(entry.path, Record({k: v for k, v in entry.record.items() if k != "metrics"}))
    assert "## Metrics" not in render_markdown(build_report([entry]))


def test_each_metric_gets_a_plot_linked_from_the_matrix(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    report = build_report([_record("0.4.35", [10.0, 11.0, 12.0]), _record("0.6.0", [2.0, 2.5, 3.0])])
    (path,) = plot_metrics(report.metrics, tmp_path / "plots", tmp_path)
    assert path.name == "metric-mine-solve_ms-cpu.png"
    assert path.stat().st_size > 1000
    assert "Plots across releases: [solve_ms](plots/metric-mine-solve_ms-cpu.png)." in render_markdown(report)
    before = path.stat().st_mtime_ns
    plot_metrics(report.metrics, tmp_path / "plots", tmp_path)
    assert path.stat().st_mtime_ns == before  # unchanged data: the image is kept


@pytest.mark.parametrize("old", ["before the schema", "another schema"])
def test_the_manifest_carries_a_schema_and_one_of_another_layout_is_not_read(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, old: str) -> None:
    from kit.matrix import metric_series

    drawn: list[str] = []

    def draw(one: object, path: Path) -> bool:
        drawn.append(path.name)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b"png")
        return True

    monkeypatch.setattr(metric_series, "_draw", draw)
    report = build_report([_record("0.4.35", [10.0, 11.0, 12.0])])
    plot_metrics(report.metrics, tmp_path / "plots", tmp_path)
    manifest = tmp_path / "plots" / metric_series.MANIFEST
    written = json.loads(manifest.read_text())
    assert written["schema"] == metric_series.MANIFEST_SCHEMA
    assert list(written["images"]) == drawn
    plot_metrics(report.metrics, tmp_path / "plots", tmp_path)
    assert len(drawn) == 1  # read back: nothing to draw
    # As the kit wrote it before it had a schema (the images' digests at the top), or of a later layout.
    manifest.write_text(json.dumps(written["images"] if old == "before the schema"
                                   else {**written, "schema": metric_series.MANIFEST_SCHEMA + 1}))
    plot_metrics(report.metrics, tmp_path / "plots", tmp_path)
    assert len(drawn) == 2
    assert json.loads(manifest.read_text()) == written
