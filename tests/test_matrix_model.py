"""kit/matrix/model.py: records to the answer, each known problem's measured range, and what is listed aside.

Built from hand-made records (no fixture folder), so each case shows the one thing it is about; the
fixture sweep's answer and rendering are in test_matrix_report.py and tests/faults/test_answer_counts.py.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from kit import __version__, records
from kit.matrix.known_problems import KnownProblem, UpstreamChange
from kit.matrix.model import SCHEMA, build_report
from kit.records import LoadedRecord

FIX = UpstreamChange("0.5.3", "the fix", "https://github.com/jax-ml/jax/pull/1", "abc", "verified")
PROBLEM = KnownProblem("p", "scaling", "a problem", ("https://github.com/jax-ml/jax/issues/1",), FIX)


def _record(check: str, jax: str, status: str = "ran", verdict: str | None = "unaffected", backend: str = "cpu",
            machine: str = "m1", created: str = "2026-01-01T00:00:00Z", **environment: Any) -> dict[str, Any]:
    return {"schema": records.SCHEMA, "kit_version": __version__, "check": check,
            "requested": {"jax": jax, "backend": backend, "preset": None}, "status": status, "verdict": verdict,
            "reason": "r", "environment": {"backend": backend, **environment}, "install": {}, "parameters": {},
            "evidence": {"summary": {}}, "host": {"name": f"host-{machine}", "machine_id": machine},
            "created": created}


def _report(*recs: dict[str, Any], **options: Any) -> Any:
    options.setdefault("known_problems", [PROBLEM])
    return build_report(list(recs), **options)


def test_lowest_and_newest_passing_skip_a_failing_release_between() -> None:
    report = _report(_record("scaling", "0.4.35", verdict="affected"), _record("scaling", "0.5.0"),
                     _record("scaling", "0.5.1", verdict="affected"), _record("scaling", "0.6.0"))
    [answer] = report.backends
    assert (answer.lowest_passing, answer.newest_passing) == ("0.5.0", "0.6.0")
    assert answer.not_passing_above == ["0.5.1 (scaling affected)"]
    assert answer.newest_blocked == []  # only said when nothing passes


def test_releases_sort_by_number_not_by_text() -> None:
    # "0.4.9" > "0.4.10" as text: the lowest passing release must be the numerically lowest.
    report = _report(_record("scaling", "0.4.10"), _record("scaling", "0.4.9"), matrix_releases=["0.4.11", "0.4.2"])
    [answer] = report.backends
    assert answer.releases_measured == ["0.4.9", "0.4.10"]
    assert answer.lowest_passing == "0.4.9"
    assert report.not_measured == ["0.4.2", "0.4.11"]


def test_a_not_installable_release_above_the_answer_is_not_listed_as_failing() -> None:
    # It cannot be picked, but it is not a release where the bug is back either.
    report = _report(_record("scaling", "0.5.0"), _record("scaling", "0.5.1", "not-installable", None))
    assert report.backends[0].not_passing_above == []


def test_a_release_missing_a_counted_checks_record_does_not_pass() -> None:
    report = _report(_record("scaling", "0.5.0"), _record("correctness", "0.5.0"), _record("scaling", "0.6.0"))
    [answer] = report.backends
    assert (answer.lowest_passing, answer.newest_passing) == ("0.5.0", "0.5.0")
    only_new = _report(_record("correctness", "0.5.0", verdict="affected"), _record("scaling", "0.6.0"))
    assert only_new.backends[0].newest_blocked == ["no correctness record"]


def test_each_backend_gets_its_own_answer() -> None:
    report = _report(_record("scaling", "0.5.0", backend="cuda", verdict="affected"), _record("scaling", "0.5.0"))
    assert [(a.backend, a.lowest_passing) for a in report.backends] == [("cpu", "0.5.0"), ("gpu", None)]  # cuda reads as gpu
    assert report.backends[1].newest_blocked == ["scaling affected"]


def test_the_newest_record_of_a_cell_counts_and_the_older_is_listed() -> None:
    old = LoadedRecord(Path("old.json"), _record("scaling", "0.5.0", verdict="affected", created="2026-01-01T00:00:00Z"))
    new = LoadedRecord(Path("new.json"), _record("scaling", "0.5.0", created="2026-02-01T00:00:00Z"))
    report = _report(old, new)  # type: ignore[arg-type]
    assert report.backends[0].lowest_passing == "0.5.0"
    assert [(o.file, o.verdict) for o in report.older] == [("old.json", "affected")]
    assert report.record_count == 2


def test_a_known_problems_range_comes_from_the_records() -> None:
    report = _report(_record("scaling", "0.4.30", verdict="affected"), _record("scaling", "0.4.31"),
                     _record("scaling", "0.4.35", verdict="affected"), _record("scaling", "0.4.36"),
                     _record("scaling", "0.5.0", verdict="inconclusive"), _record("scaling", "0.6.0"))
    [problem] = report.known_problems
    [cpu] = problem.ranges
    assert (cpu.first_affected, cpu.last_affected) == ("0.4.30", "0.4.35")
    assert cpu.affected == ["0.4.30", "0.4.35"]
    assert cpu.unaffected_inside == ["0.4.31"]
    assert cpu.first_unaffected_above == "0.4.36"
    assert cpu.inconclusive == ["0.5.0"]
    assert problem.upstream_fixed_in == "0.5.3"
    assert problem.upstream_change == "the fix — https://github.com/jax-ml/jax/pull/1"


def test_one_machine_measuring_affected_makes_the_release_affected() -> None:
    # Two machines disagree on 0.5.0: the range must include it, not call it clean or inconclusive.
    report = _report(_record("scaling", "0.5.0", machine="m1"), _record("scaling", "0.5.0", verdict="affected",
                                                                        machine="m2"))
    [cpu] = report.known_problems[0].ranges
    assert cpu.affected == ["0.5.0"]
    assert cpu.inconclusive == []


def test_a_problem_without_records_or_fix_has_no_range_and_no_upstream_text() -> None:
    open_bug = KnownProblem("mine", "correctness", "an open bug", (), None)
    report = _report(_record("scaling", "0.5.0"), _record("correctness", "0.5.0", "crashed", None),
                     known_problems=[open_bug])
    [problem] = report.known_problems
    assert problem.ranges == []  # a crashed run measures nothing about the problem
    assert (problem.upstream_fixed_in, problem.upstream_change) == ("", "")


def test_machines_list_hosts_models_and_devices_once_each_sorted() -> None:
    report = _report(_record("scaling", "0.5.0", device_kind="cpu", device_count=4, cpu_model="Xeon"),
                     _record("correctness", "0.5.0", device_kind="cpu", device_count=4, cpu_model="Xeon"),
                     _record("scaling", "0.6.0", backend="cuda", device_kind="NVIDIA H100", device_count=8),
                     _record("scaling", "0.6.0", machine="m2"))
    first, second = report.machines
    assert (first.machine, first.hosts, first.cpu_models) == ("m1", ["host-m1"], ["Xeon"])
    assert first.devices == ["cpu ×4", "gpu NVIDIA H100 ×8"]  # the kind named once, cuda as gpu
    assert (second.machine, second.devices) == ("m2", [])


def test_unusable_files_and_the_json_schema_are_in_the_report() -> None:
    unusable = [records.UnusableFile(Path("results/bad.json"), "empty file")]
    data = _report(unusable=unusable).to_json()
    assert data["unusable_files"] == [{"file": "results/bad.json", "reason": "empty file"}]
    assert (data["schema"], data["kit_version"]) == (SCHEMA, __version__)
    assert data["backends"] == []
    assert data["rows"] == []
    assert data["record_count"] == 0
