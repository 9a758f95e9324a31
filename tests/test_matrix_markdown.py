"""kit/matrix/markdown.py: the model rendered as matrix.md, from hand-built model values.

The fixture sweep's rendering is in test_matrix_report.py; here each sentence form and each
cell form is reached directly, including the ones that sweep does not have.
"""

from __future__ import annotations

from typing import Any

from kit.matrix.markdown import render_answer, render_markdown, render_rows
from kit.matrix.model import AdHocRun, AffectedRange, BackendAnswer, KnownProblemAnswer, Machine, Report
from kit.matrix.rows import CellFinding, Row
from kit.text_bounds import CELL_CHARS


def _report(**fields: Any) -> Report:
    base: dict[str, Any] = {"backends": [], "known_problems": [], "rows": [], "checks": [], "older": [],
                            "ad_hoc": [], "unusable_files": [], "machines": [], "not_measured": [], "record_count": 0}
    base.update(fields)
    return Report(**base)


def _range(**fields: Any) -> AffectedRange:
    base: dict[str, Any] = {"backend": "cpu", "first_affected": None, "last_affected": None, "affected": [],
                            "unaffected_inside": [], "first_unaffected_above": None, "inconclusive": [],
                            "releases_measured": ["0.5.0", "0.6.0"]}
    base.update(fields)
    return AffectedRange(**base)


def _problem(*ranges: AffectedRange, **fields: Any) -> KnownProblemAnswer:
    base: dict[str, Any] = {"key": "p", "check": "scaling", "title": "The problem",
                            "links": ["https://example.org/1"], "upstream_fixed_in": "", "upstream_change": "",
                            "ranges": list(ranges)}
    base.update(fields)
    return KnownProblemAnswer(**base)


def _finding(**fields: Any) -> CellFinding:
    base: dict[str, Any] = {"check": "scaling", "status": "ran", "verdict": "unaffected", "figure": "", "reason": "",
                            "created": "", "reproduce": "", "file": ""}
    base.update(fields)
    return CellFinding(**base)


def _row(findings: dict[str, CellFinding], **fields: Any) -> Row:
    base: dict[str, Any] = {"release": "0.6.0", "backend": "cpu", "machine": "m", "host": "h", "device_kind": "cpu",
                            "device_count": "4", "python": "3.12", "jaxlib": "0.6.0", "install": "built",
                            "findings": findings, "reproduce": ["nox -s scaling-0.6.0"]}
    base.update(fields)
    return Row(**base)


def test_no_known_problems_is_said_in_a_sentence_not_an_empty_heading() -> None:
    lines = render_answer(_report())
    assert lines[-2] == "Known problems: no catalogue entry names a check of the matrix, so no range is measured against one."
    assert not any(line.startswith("Known problems (") for line in lines)
    with_one = render_answer(_report(known_problems=[_problem()]))
    assert "Known problems (ranges measured from the records; upstream fix for comparison):" in with_one


def test_one_passing_release_names_it_without_a_newest_clause() -> None:
    # lowest == newest: "newest measured that passes" would repeat the same release.
    answer = BackendAnswer("cpu", ["scaling"], "0.6.0", ["0.6.0"], [], newest_passing="0.6.0")
    assert render_answer(_report(backends=[answer]))[2] == ("- **cpu**: lowest release passing every check "
                                                            "(scaling): **0.6.0**")


def test_no_passing_release_without_a_reason_says_only_what_was_measured() -> None:
    answer = BackendAnswer("gpu", [], None, ["0.5.0"], [])
    assert render_answer(_report(backends=[answer]))[2] == ("- **gpu**: no measured release passes every check "
                                                            "(no check that ran); measured: 0.5.0")


def test_measured_only_checks_are_named_as_outside_the_answer() -> None:
    lines = render_answer(_report(measured_only=["timing", "mem"]))
    assert ("- not in the answer: `timing`, `mem` only measure (metrics, no verdict of their own); their cells say "
            "*measured*") in lines


def test_a_range_of_one_release_is_named_once_and_the_rest_said_in_order() -> None:
    r = _range(first_affected="0.5.0", last_affected="0.5.0", affected=["0.5.0"], inconclusive=["0.4.0"])
    lines = render_answer(_report(known_problems=[_problem(r)]))
    assert ("  - cpu: affected 0.5.0 (1 of 2 measured releases); no unaffected release measured above it; "
            "inconclusive: 0.4.0") in lines


def test_a_backend_the_problem_does_not_show_on_gets_a_caveat_and_the_missing_one_a_command() -> None:
    # A clean cpu result must not read as clearing gpu, and gpu unmeasured must say how to measure it.
    problem = _problem(_range(), shows_on=["gpu"])
    lines = render_answer(_report(known_problems=[problem]))
    assert ("  - cpu: no measured release affected (2 measured: 0.5.0, 0.6.0) (reported on gpu only: this does not "
            "clear a release there)") in lines
    assert ("  - gpu: not measured in these records (`nox -s scaling-<release> -- --backend cuda` on a gpu "
            "machine)") in lines
    assert "  - upstream: no fix recorded in the catalogue" in lines


def test_a_problem_without_records_says_how_to_measure_it() -> None:
    lines = render_answer(_report(known_problems=[_problem(shows_on=[])]))
    assert "  - not measured yet (`nox -s scaling-<release>`)" in lines


def test_a_workaround_gets_its_own_line_under_its_range() -> None:
    r = _range(first_affected="0.5.0", last_affected="0.5.0", affected=["0.5.0"], workaround="use shard_map")
    lines = render_answer(_report(known_problems=[_problem(r, shows_on=["cpu"])]))
    assert lines[lines.index("  - cpu, workaround the records support: use shard_map") - 1].startswith("  - cpu: ")


def test_cells_say_each_status_in_words() -> None:
    checks = ["a", "b", "c", "d", "e", "f"]
    row = _row({"a": _finding(status="not-installable", reason="no wheel"),
                "b": _finding(status="crashed", reason="killed", ran_by="SLURM job 12_1 on n1"),
                "c": _finding(status="timed-out"),
                "d": _finding(verdict="affected", figure="4096 of 4096"),
                "e": _finding(measured=True, verdict=None, figure="t=1.0 s"),
                "f": _finding(verdict="inconclusive")})
    cells = render_rows(_report(rows=[row], checks=[*checks, "g"]))[2].split(" | ")
    assert cells[6:13] == ["not installable", "crashed: killed (SLURM job 12_1 on n1)", "timed-out",
                           "**affected** · 4096 of 4096", "measured · t=1.0 s", "inconclusive", "—"]


def test_a_pipe_or_newline_in_a_cell_cannot_break_the_table() -> None:
    row = _row({"scaling": _finding(status="crashed", reason="a | b\nc")})
    line = render_rows(_report(rows=[row], checks=["scaling"]))[2]
    assert "crashed: a \\| b c" in line
    assert "\n" not in line


def test_a_long_reason_is_cut_to_a_cell() -> None:
    row = _row({"scaling": _finding(status="crashed", reason="x" * 5000)})
    line = render_rows(_report(rows=[row], checks=["scaling"]))[2]
    assert "x" * CELL_CHARS + "… [cut 4.7 kB]" in line
    assert "x" * (CELL_CHARS + 1) not in line


def test_an_environment_row_reads_as_itself_and_missing_facts_as_dashes() -> None:
    row = _row({}, environment="mine", versions="jax 0.4.35, numpy 2.1", device_kind="", device_count="",
               python="", jaxlib="", reproduce=["a", "b"])
    cells = render_rows(_report(environment_rows=[row], checks=["scaling"]))[2].split(" | ")
    assert cells[0] == "| **mine** (your environment: jax 0.4.35, numpy 2.1)"
    assert cells[2:5] == ["—", "—", "—"]
    assert cells[-1] == "`a`<br>`b` |"


def test_the_page_lists_ad_hoc_runs_unusable_files_and_machines() -> None:
    run = AdHocRun("scaling", "0.6.0", "cpu", "0123456789abcdef", "2026-01-01", "ran", None, "f.json",
                   differs="--devices 1")
    report = _report(ad_hoc=[run], unusable_files=[{"file": "bad.json", "reason": "empty file"}],
                     machines=[Machine("0123456789abcdef", [], ["Xeon"], ["cpu ×4"])], not_measured=["0.4.13"])
    text = render_markdown(report)
    assert "- scaling 0.6.0 cpu on 0123456789ab with `--devices 1`: 2026-01-01, ran (`f.json`)" in text
    assert "- `bad.json`: empty file" in text
    assert "Records produced on: `unnamed host` (machine 0123456789ab; Xeon; cpu ×4)." in text
    assert "Not measured yet: 0.4.13." in text
    assert "No records." in text
    assert "Plots were not built." in text
