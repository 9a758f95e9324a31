"""kit.matrix.plots: plots are redrawn only when the records they show change."""

from __future__ import annotations

import importlib.util
import json
import logging
import shutil
from pathlib import Path

import pytest

from kit.matrix import plots
from kit.records import LoadedRecord, load_records

FIXTURES = Path(__file__).parent / "fixtures" / "records" / "cpu-laptop-sweep"

needs_matplotlib = pytest.mark.skipif(importlib.util.find_spec("matplotlib") is None,
                                      reason="matplotlib is not installed: there is no PNG to draw")


@needs_matplotlib
@pytest.mark.real_time  # draws real images with matplotlib
def test_unchanged_records_keep_the_images_and_changed_ones_redraw(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    results = tmp_path / "results"
    shutil.copytree(FIXTURES, results)
    first = plots.make_plots(load_records(results).entries, tmp_path / "plots")
    assert first.images
    assert all(image.path.exists() for image in first.images)
    # Time per release in panels, and every release on one axis.
    assert {i.path.name for i in first.images} >= {"scaling-cpu.png", "scaling-overview-cpu.png"}

    monkeypatch.setattr(plots, "_draw", lambda *a, **k: pytest.fail("redrew unchanged plots"))
    again = plots.make_plots(load_records(results).entries, tmp_path / "plots")
    assert [i.path for i in again.images] == [i.path for i in first.images]

    record_path = next(results.glob("scaling-*.json"))
    record = json.loads(record_path.read_text())
    record["verdict"] = "affected" if record.get("verdict") != "affected" else "unaffected"
    record_path.write_text(json.dumps(record))
    drawn: list[int] = []
    monkeypatch.setattr(plots, "_draw", lambda entries, out_dir: drawn.append(1) or plots.PlotOutcome())
    plots.make_plots(load_records(results).entries, tmp_path / "plots")
    assert drawn == [1]


@needs_matplotlib
@pytest.mark.real_time  # draws real images with matplotlib
def test_a_manifest_of_another_schema_is_redrawn_not_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    entries = load_records(FIXTURES).entries
    plots.make_plots(entries, tmp_path / "plots")
    manifest = json.loads((tmp_path / "plots" / plots.MANIFEST).read_text())
    assert manifest["schema"] == plots.MANIFEST_SCHEMA
    assert not [p for p in (tmp_path / "plots").iterdir() if p.name.startswith(".tmp-")]
    manifest.pop("schema")
    (tmp_path / "plots" / plots.MANIFEST).write_text(json.dumps(manifest))
    drawn: list[int] = []
    monkeypatch.setattr(plots, "_draw", lambda entries, out_dir: drawn.append(1) or plots.PlotOutcome())
    plots.make_plots(entries, tmp_path / "plots")
    assert drawn == [1]


@needs_matplotlib
@pytest.mark.real_time  # draws real images with matplotlib
def test_drawing_under_a_debug_logger_prints_no_matplotlib_debug_lines(tmp_path: Path,
                                                                      caplog: pytest.LogCaptureFixture) -> None:
    # nox runs sessions with the root logger at DEBUG: matplotlib's font search then logged dozens of lines.
    for name in ("matplotlib", "PIL"):
        logging.getLogger(name).setLevel(logging.NOTSET)
    from matplotlib import font_manager

    # findfont logs only on a cache miss: empty the cache so earlier drawings do not hide the lines.
    getattr(font_manager.fontManager, "_findfont_cached", None).cache_clear()
    caplog.set_level(logging.DEBUG)
    outcome = plots.make_plots(load_records(FIXTURES).entries, tmp_path / "plots")
    assert outcome.images
    assert [r.name for r in caplog.records if r.name.startswith(("matplotlib", "PIL"))] == []


def test_images_drawn_by_an_earlier_way_of_drawing_are_drawn_again(tmp_path: Path) -> None:
    out = tmp_path / "plots"
    out.mkdir()
    (out / "scaling-cpu.png").write_bytes(b"png")
    manifest = {"schema": plots.MANIFEST_SCHEMA, "drawing": plots.DRAWING, "inputs": "digest",
                "images": [{"title": "Scaling on cpu", "path": "scaling-cpu.png"}], "notes": []}
    (out / plots.MANIFEST).write_text(json.dumps(manifest))
    assert plots._unchanged(out, "digest") is not None  # kept: the same records, drawn the same way
    for earlier in ({**manifest, "drawing": plots.DRAWING - 1},
                    {k: v for k, v in manifest.items() if k != "drawing"}):  # as written before it was named
        (out / plots.MANIFEST).write_text(json.dumps(earlier))
        assert plots._unchanged(out, "digest") is None


def _scaling_record(version: str, verdict: str, summary: dict) -> LoadedRecord:
    record = {"schema": 1, "check": "scaling", "status": "ran", "verdict": verdict, "created": "2026-11-30T00:00:00Z",
              "requested": {"jax": version, "backend": "cpu"}, "environment": {"backend": "cpu"},
              "host": {"machine_id": "m"}, "evidence": {"summary": summary}}
    return LoadedRecord(Path(f"scaling-{version}.json"), record)


@needs_matplotlib
@pytest.mark.parametrize(("summaries", "title", "said"), [
    ([{"slogdet_speedup_2": 0.6, "slogdet_speedup_4": 0.3, "control_speedup_2": 3.5, "control_speedup_4": 3.7},
      {"slogdet_speedup_2": 1.9, "slogdet_speedup_4": 3.6, "control_speedup_2": 1.9, "control_speedup_4": 3.6}],
     "Scaling on cpu: speedup over one device", "speedups from the summary"),
    ([{"efficiency_2": 0.5, "efficiency_4": 0.3}, {"efficiency_2": 0.97, "efficiency_4": 0.93}],
     "Scaling on cpu: slogdet speedup ÷ control speedup", "the slogdet ÷ control speedup ratio from the summary"),
])
def test_without_timings_the_summary_is_drawn_under_the_name_of_what_it_holds(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, summaries: list[dict], title: str, said: str) -> None:
    saved: list[str] = []
    monkeypatch.setattr(plots, "_save", lambda fig, path, title, outcome: saved.append(title))
    outcome = plots.PlotOutcome()
    entries = [_scaling_record("0.4.35", "affected", summaries[0]), _scaling_record("0.6.0", "unaffected", summaries[1])]
    plots._plot_scaling(entries, "cpu", tmp_path, outcome)
    assert saved == [title]
    assert outcome.notes == [f"Scaling on cpu: no timing detail in the records; {said}."]
