"""kit.matrix.report: the answer and the matrix rows, built from fixture records alone."""

from __future__ import annotations

import builtins
import importlib.util
import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from kit.records import load_records
from kit.matrix.markdown import render_answer, render_markdown, render_rows
from kit import cli
from kit.matrix.model import SCHEMA, build_report
from kit.matrix.report import write_report

from tests.record_samples import CONFIGURED, FIXTURES, answer_section, fixture_matrix

# The parameters the fixture records ran with, as a matrix.toml would configure them.
FIXTURE_MATRIX = fixture_matrix("0.5.3")


@pytest.fixture(scope="module")
def report_md() -> str:
    loaded = load_records(FIXTURES)
    report = build_report(loaded.entries, matrix_releases=["0.4.16", "0.4.35", "0.4.38"], unusable=loaded.unusable)
    return render_markdown(report)


def _report() -> Any:
    loaded = load_records(FIXTURES)
    return build_report(loaded.entries, unusable=loaded.unusable)


def test_answer_names_lowest_passing_release_per_backend() -> None:
    lines = render_answer(_report())
    assert ("- **cpu**: lowest release passing every check (scaling, correctness): **0.5.3**; "
            "newest measured that passes: **0.6.0**") in lines
    assert "- **gpu**: lowest release passing every check (scaling, correctness): **0.5.3**" in lines


def test_answer_gives_measured_ranges_and_upstream_links() -> None:
    text = "\n".join(render_answer(_report()))
    assert "  - cpu: affected 0.4.35 … 0.5.2 (2 of 4 measured releases); first unaffected above: 0.5.3" in text
    assert "  - gpu: affected 0.4.35 … 0.4.36 (2 of 3 measured releases); first unaffected above: 0.5.3" in text
    assert "  - gpu: affected 0.4.35 (1 of 3 measured releases); first unaffected above: 0.4.36" in text
    assert "  - cpu: no measured release affected (4 measured: 0.4.35, 0.5.2, 0.5.3, 0.6.0)" in text
    assert "<https://github.com/jax-ml/jax/issues/24843>" in text
    assert "fixed in 0.5.3 by Add and test support for partitioning of batch dimensions in lax.linalg" in text
    assert "f93c2a1aa51d0d124bf0632eacbe95c261dacd57" in text


def test_ranges_follow_the_records_not_upstream() -> None:
    """A record saying 0.6.0 is affected again must show, whatever upstream claims."""
    loaded = load_records(FIXTURES)
    regressed = [dict(e.record) for e in loaded.entries]
    extra = json.loads((FIXTURES / "cpu-laptop-sweep" / "scaling-0.6.0-unaffected.json").read_text())
    extra.update(verdict="affected", created="2026-12-01T00:00:00Z")
    text = "\n".join(render_answer(build_report(regressed + [extra])))
    assert "- **cpu**: lowest release passing every check (scaling, correctness): **0.5.3** — but above it, " \
           "not passing: 0.6.0 (scaling affected)" in text
    assert "  - cpu: affected 0.4.35 … 0.6.0 (3 of 4 measured releases); no unaffected release measured above it; " \
           "unaffected inside the range: 0.5.3" in text


def test_rows_one_per_release_backend_machine(report_md: str) -> None:
    rows = [line for line in report_md.splitlines() if line.startswith("| 0.")]
    assert [r.split(" | ")[:2] for r in rows] == [
        ["| 0.4.16", "cpu"],
        ["| 0.4.35", "cpu"],
        ["| 0.4.35", "gpu"],
        ["| 0.4.36", "gpu"],
        ["| 0.5.2", "cpu"],
        ["| 0.5.3", "cpu"],
        ["| 0.5.3", "gpu"],
        ["| 0.6.0", "cpu"],
    ]
    assert (
        "| 0.4.35 | gpu | NVIDIA H100 80GB HBM3 ×4 | 3.12.3 | 0.4.35 | ok "
        "| **affected** · 1 all-gather; LU batch 8192 per device of 8192 on 4 devices; "
        "speedup over 1 device: slogdet 1.39x @2, 1.16x @4; control 1.74x @2, 3.17x @4 "
        "| **affected** · max rel error 1.7e+00; 2048 bad, first at index 134217728 "
        "| `nox -s scaling-0.4.35 -- --backend cuda`<br>`nox -s correctness-0.4.35 -- --backend cuda` |"
    ) in rows
    assert (
        "| 0.5.3 | cpu | cpu ×4 | 3.11.9 | 0.5.3 | ok "
        "| unaffected · 0 all-gathers; LU batch 2048 per device of 8192 on 4 devices; "
        "speedup over 1 device: slogdet 1.94x @2, 3.67x @4; control 1.92x @2, 3.64x @4 "
        "| unaffected · max rel error 2.4e-07; none bad "
        "| `nox -s scaling-0.5.3`<br>`nox -s correctness-0.5.3` |"
    ) in rows


def test_not_installable_release_has_a_row_with_the_reason(report_md: str) -> None:
    assert (
        "| 0.4.16 | cpu | — | 3.12.3 | — | not installable: jaxlib 0.4.16 has no wheel for Python 3.12; "
        "supply one with --python 3.11 | not installable | — | `nox -s scaling-0.4.16` |"
    ) in report_md


def test_newest_record_wins_and_older_are_counted_in_one_line(report_md: str) -> None:
    # Counted where the reader is; listed in matrix.json, where tools look.
    assert ("Older records: 2 superseded by a newer record of the same cell (listed in matrix.json under `older`)."
            in report_md.splitlines())
    assert "scaling-0.5.2-first-run-inconclusive.json" not in report_md
    assert sorted(old.file for old in _report().older) == ["scaling-0.5.2-first-run-inconclusive.json",
                                                           "scaling-0.6.0-from-kit-0.0.9.json"]
    row_052 = next(line for line in report_md.splitlines() if line.startswith("| 0.5.2 |"))
    # A record with neither speedups nor timings shows the ratio it summarised, by its name.
    assert "**affected** · 1 all-gather; LU batch 8192 per device of 8192 on 4 devices; " \
           "slogdet speedup ÷ control speedup 0.52 @2, 0.29 @4 |" in row_052


def test_problems_and_machines_and_not_measured(report_md: str) -> None:
    assert "## Unusable files (2 record files skipped)" in report_md
    assert "corrupt-truncated.json`: not valid JSON (truncated or corrupt?)" in report_md
    assert "newer-schema-from-future-kit.json`: written by a newer kit (schema 2" in report_md
    assert ("Records produced on: `laptop-cpu` (machine aaaa1111bbbb; AMD EPYC 7B13; cpu ×4), "
            "`gpu-node-7` (machine cccc2222dddd; Intel Xeon Platinum 8480+; gpu NVIDIA H100 80GB HBM3 ×4).") \
        in report_md
    assert "Not measured yet: 0.4.38." in report_md


def test_no_records_says_what_to_run() -> None:
    text = render_markdown(build_report([]))
    assert "No records yet: run `nox -s matrix`" in text
    assert render_rows(build_report([]))[0].startswith("| Release |")


@pytest.mark.skipif(importlib.util.find_spec("matplotlib") is None, reason="matplotlib is not installed: no plots")
@pytest.mark.real_time  # draws real images with matplotlib
def test_write_report_writes_md_json_and_plots(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    results = tmp_path / "results"
    shutil.copytree(FIXTURES, results)
    matrix = tmp_path / "matrix.toml"
    matrix.write_text(FIXTURE_MATRIX)
    assert cli.main(["report", "--results", str(results), "--out", str(tmp_path / "out")],
                    matrix_path=str(matrix)) == 0
    out = capsys.readouterr()
    assert f"wrote {tmp_path / 'out' / 'matrix.md'}" in out.out
    assert "skipped" in out.err
    assert "corrupt-truncated.json" in out.err
    data = json.loads((tmp_path / "out" / "matrix.json").read_text())
    assert data["schema"] == SCHEMA
    assert [b["lowest_passing"] for b in data["backends"]] == ["0.5.3", "0.5.3"]
    assert len(data["rows"]) == 8
    assert len(data["older"]) == 2
    assert len(data["unusable_files"]) == 2
    assert {p["file"] for p in data["unusable_files"]} == {"corrupt-truncated.json",
                                                           "newer-schema-from-future-kit.json"}
    md = (tmp_path / "out" / "matrix.md").read_text()
    for name in ("scaling-cpu", "scaling-gpu", "correctness-cpu", "correctness-gpu"):
        assert f"](plots/{name}.png)" in md
        assert (tmp_path / "out" / "plots" / f"{name}.png").read_bytes()[:4] == b"\x89PNG"
    assert not [p for p in (tmp_path / "out").rglob("*") if p.name.startswith(".tmp-")]


def test_report_builds_without_matplotlib(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    real_import = builtins.__import__

    def no_matplotlib(name: str, *args: Any, **kwargs: Any) -> Any:
        if name.startswith("matplotlib"):
            raise ImportError(f"No module named {name!r}")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_matplotlib)
    result = write_report(FIXTURES, tmp_path)
    assert result.plots == []
    md = result.markdown.read_text()
    assert "matplotlib is not installed: plots skipped" in md
    assert "**0.5.3**" in md


def test_a_cpu_only_correctness_result_does_not_clear_releases_for_gpus() -> None:
    loaded = load_records(FIXTURES)
    cpu_only = [dict(e.record) for e in loaded.entries if e.record.get("requested", {}).get("backend") == "cpu"]
    text = "\n".join(render_answer(build_report(cpu_only)))
    assert "(reported on gpu only: this does not clear a release there)" in text
    assert "  - gpu: not measured in these records (`nox -s correctness-<release> -- --backend cuda`" in text
    # The CPU/GPU slogdet problem shows on CPU: no caveat on its CPU range (the TPU one's CPU range has one).
    scaling_lines = [line for line in text.splitlines() if line.startswith("  - cpu: affected")]
    assert scaling_lines
    assert any("does not clear" not in line for line in scaling_lines)
    assert "(reported on tpu only" not in text  # the CPU's affected range is the CPU/GPU problem's, not the TPU's
    assert "  - tpu: not measured in these records (`nox -s scaling-<release> -- --target tpu:v5e:2x2`" in text


def test_an_ad_hoc_run_never_changes_the_answer_or_the_matrix(tmp_path: Path) -> None:
    # As `nox -s scaling-0.6.0 -- --devices 1 --repeats 1` followed by `nox -s report`.
    results = tmp_path / "results"
    shutil.copytree(FIXTURES / "cpu-laptop-sweep", results)
    before = write_report(results, tmp_path / "before", plots=False, configured=CONFIGURED)
    one_off = json.loads((results / "scaling-0.6.0-unaffected.json").read_text())
    one_off.update(created="2026-11-30T00:00:00Z", verdict="inconclusive", reproduce="nox -s scaling-0.6.0 -- ...")
    one_off["parameters"] = {**one_off["parameters"], "devices": [1], "repeats": 1}
    (results / "scaling-0.6.0-one-off.json").write_text(json.dumps(one_off))
    preset = {**one_off, "parameters": {**one_off["parameters"], "devices": [1, 2, 4]},
              "requested": {**one_off["requested"], "preset": "thread"}}
    (results / "scaling-0.6.0-preset.json").write_text(json.dumps(preset))

    after = write_report(results, tmp_path / "after", plots=False, configured=CONFIGURED)
    md = after.markdown.read_text()
    assert answer_section(md) == answer_section(before.markdown.read_text())
    assert [r.findings["scaling"].verdict for r in after.report.rows if r.release == "0.6.0"] == ["unaffected"]
    assert "## Ad-hoc runs (2 with parameters other than matrix.toml's; not in the answer or the matrix)" in md
    assert "- scaling 0.6.0 cpu on " in md
    assert "with `--devices 1`: 2026-11-30T00:00:00Z, ran, verdict inconclusive" in md
    assert "with `--preset thread`:" in md
    assert [run.file for run in after.report.ad_hoc] == ["scaling-0.6.0-one-off.json", "scaling-0.6.0-preset.json"]


def test_a_refused_size_shows_as_refused() -> None:
    loaded = load_records(FIXTURES / "cpu-laptop-sweep")
    refused = json.loads((FIXTURES / "cpu-laptop-sweep" / "correctness-0.6.0-unaffected.json").read_text())
    refused.update(status="refused", verdict=None, created="2026-11-30T00:00:00Z",
                   reason="the repro refused the size: error: does not fit: needs about 780 GiB")
    report = build_report([*loaded.entries, refused])
    assert "refused: the repro refused the size" in "\n".join(render_rows(report))
    assert "0.6.0 (correctness refused)" in "\n".join(render_answer(report))


def test_a_full_disk_is_one_sentence_and_leaves_matrix_md_and_json_as_they_were(tmp_path: Path, monkeypatch,
                                                                               capsys) -> None:
    from kit import atomic_files

    out = tmp_path / "out"
    out.mkdir()
    (out / "matrix.md").write_text("old md")
    (out / "matrix.json").write_text("{}")
    matrix = tmp_path / "matrix.toml"
    matrix.write_text(FIXTURE_MATRIX)

    def disk_full(fd: int) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(atomic_files.os, "fsync", disk_full)
    code = cli.main(["report", "--results", str(FIXTURES / "cpu-laptop-sweep"), "--out", str(out), "--no-plots"],
                    matrix_path=str(matrix))
    assert code == 1
    assert capsys.readouterr().err.splitlines() == [
        f"ERROR: could not write the report into {out} (No space left on device); "
        "matrix.md and matrix.json were left as they were",
        "TIP: free some space (or fix the folder's permissions), then run nox -s report again"]
    assert (out / "matrix.md").read_text() == "old md"
    assert (out / "matrix.json").read_text() == "{}"
    assert sorted(p.name for p in out.iterdir()) == ["matrix.json", "matrix.md"]


@pytest.mark.skipif(importlib.util.find_spec("matplotlib") is None, reason="matplotlib is not installed: no plots")
def test_a_plot_that_does_not_fit_on_disk_is_the_same_one_sentence(tmp_path: Path, monkeypatch) -> None:
    from matplotlib.figure import Figure

    from kit.errors import StorageError

    def disk_full(self: Any, *args: Any, **kwargs: Any) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(Figure, "savefig", disk_full)
    with pytest.raises(StorageError, match=r"\(No space left on device\); matrix.md and matrix.json were left"):
        write_report(FIXTURES / "cpu-laptop-sweep", tmp_path / "out")
    assert not (tmp_path / "out" / "matrix.md").exists()
    assert not [p for p in (tmp_path / "out").rglob("*") if p.is_file()]


def test_the_answer_names_the_newest_passing_release_too() -> None:
    loaded = load_records(FIXTURES / "cpu-laptop-sweep")
    [answer] = build_report(loaded.entries).backends
    assert (answer.lowest_passing, answer.newest_passing) == ("0.5.3", "0.6.0")
    assert "**0.5.3**; newest measured that passes: **0.6.0**" in "\n".join(render_answer(build_report(loaded.entries)))


def test_a_multi_process_run_is_ad_hoc_unless_matrix_toml_configures_processes(tmp_path: Path) -> None:
    # As `nox -s scaling-0.6.0 -- --processes 2`: matrix.toml leaves processes at 1.
    results = tmp_path / "results"
    shutil.copytree(FIXTURES / "cpu-laptop-sweep", results)
    two = json.loads((results / "scaling-0.6.0-unaffected.json").read_text())
    two.update(created="2026-11-30T00:00:00Z", slurm={"array_job_id": "12", "array_task_id": "1", "node": "n1"})
    two["parameters"] = {**two["parameters"], "processes": 2}
    (results / "scaling-0.6.0-two-processes.json").write_text(json.dumps(two))
    md = write_report(results, tmp_path / "out", plots=False, configured=CONFIGURED).markdown.read_text()
    assert "with `--processes 2`:" in md
    assert "SLURM job 12_1" not in md.split("## Ad-hoc runs", 1)[0]  # not the matrix's cell
    configured = {**CONFIGURED, "scaling": {**CONFIGURED["scaling"], "processes": 2}}
    md = write_report(results, tmp_path / "out2", plots=False, configured=configured).markdown.read_text()
    assert "SLURM job 12_1 on n1" in md.split("## Ad-hoc runs", 1)[0]
