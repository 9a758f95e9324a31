"""kit.matrix.configured_runs: which records ran matrix.toml's parameters, and how the others differ."""

from __future__ import annotations

from pathlib import Path

from kit.matrix.configured_runs import split_ad_hoc
from kit.matrix.model import build_report
from kit.run.records import LoadedRecord, load_records

FIXTURES = Path(__file__).parent / "fixtures" / "records"


def _entry(**fields: object) -> LoadedRecord:
    record = {"check": "scaling", "requested": {"jax": "0.6.0", "backend": "cpu"}, "status": "ran",
              "parameters": {"devices": [1, 2, 4], "batch": 4096, "repeats": 7}}
    record.update(fields)
    return LoadedRecord(Path("x.json"), record)


def test_a_record_differs_by_the_flags_it_changed_or_its_preset() -> None:
    configured = {"scaling": {"devices": [1, 2, 4], "batch": 4096, "repeats": 7}}
    same = _entry()
    one_off = _entry(parameters={"devices": [1], "batch": 4096, "repeats": 1})
    preset = _entry(requested={"jax": "0.6.0", "backend": "cpu", "preset": "thread"})
    older = _entry(parameters={"devices": [1, 2, 4], "batch": 4096})  # a key the record does not hold
    in_matrix, ad_hoc = split_ad_hoc([same, one_off, preset, older], configured)
    assert in_matrix == [same]
    assert [why for _, why in ad_hoc] == ["--devices 1 --repeats 1", "--preset thread", "no --repeats"]


def test_a_check_the_matrix_does_not_configure_counts_as_is() -> None:
    in_matrix, ad_hoc = split_ad_hoc([_entry(check="qr")], {"scaling": {"batch": 1}})
    assert len(in_matrix) == 1 and ad_hoc == []


def test_without_a_matrix_every_record_counts() -> None:
    loaded = load_records(FIXTURES / "cpu-laptop-sweep")
    assert build_report(loaded.entries).ad_hoc == []
    odd = build_report(loaded.entries, configured={"scaling": {"batch": 1}})
    assert {run.check for run in odd.ad_hoc} == {"scaling"} and odd.checks == ["correctness"]


def test_processes_other_than_the_matrix_s_make_a_run_ad_hoc_and_absent_means_one() -> None:
    base = {"devices": [1, 2, 4], "batch": 4096, "repeats": 7}
    old = _entry()  # from before the parameter: one process
    one = _entry(parameters={**base, "processes": 1})
    two = _entry(parameters={**base, "processes": 2})
    in_matrix, ad_hoc = split_ad_hoc([old, one, two], {"scaling": base})
    assert in_matrix == [old, one] and [why for _, why in ad_hoc] == ["--processes 2"]
    in_matrix, ad_hoc = split_ad_hoc([old, one, two], {"scaling": {**base, "processes": 1}})
    assert in_matrix == [old, one]
    in_matrix, ad_hoc = split_ad_hoc([old, one, two], {"scaling": {**base, "processes": 2}})
    assert in_matrix == [two] and [why for _, why in ad_hoc] == ["--processes 1", "--processes 1"]
