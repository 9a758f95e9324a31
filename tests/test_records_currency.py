"""kit.records.currency: which records ran the matrix's parameters, and whether a record is current."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from kit import __version__, records
from kit.matrix.model import build_report
from kit.records import LoadedRecord, differences, is_current, load_records, newest_records_here, split_ad_hoc

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


def test_not_installable_is_an_answer_whatever_was_asked() -> None:
    record = _entry(status="not-installable", parameters={"devices": [1]}).record
    assert differences(record, {"devices": [1, 2, 4]}) == "" and differences(record, {}, preset="thread") == ""


EXISTING = {"environment": "existing", "interpreter": "/opt/jax/bin/python", "name": None,
            "packages": {"jax": "0.6.0", "jaxlib": "0.6.0"}}


def test_an_existing_interpreter_s_record_is_ad_hoc_whatever_its_parameters() -> None:
    configured = {"scaling": {"devices": [1, 2, 4], "batch": 4096, "repeats": 7}}
    existing = _entry(install=EXISTING)
    no_jax = _entry(install=EXISTING, status="not-installable")  # says nothing about the release 0.6.0
    one_off = _entry(install=EXISTING, parameters={"devices": [1], "batch": 4096, "repeats": 7})
    in_matrix, ad_hoc = split_ad_hoc([existing, no_jax, one_off], configured)
    assert in_matrix == []
    assert [why for _, why in ad_hoc] == ["--python /opt/jax/bin/python"] * 2 + ["--python /opt/jax/bin/python --devices 1"]
    # Without a matrix, or for a check it does not configure, the kit's own records count, an interpreter's do not.
    assert split_ad_hoc([existing], None)[0] == [] and split_ad_hoc([existing], {"qr": {}})[0] == []


def test_a_named_environment_s_records_count_where_it_is_named() -> None:
    configured = {"scaling": {"devices": [1, 2, 4], "batch": 4096, "repeats": 7}}
    named = _entry(install={**EXISTING, "name": "mine"})
    one_off = _entry(install={**EXISTING, "name": "mine"}, parameters={"devices": [1], "batch": 4096, "repeats": 7})
    in_matrix, ad_hoc = split_ad_hoc([named, one_off], configured, environments=["mine"])
    assert in_matrix == [named]
    assert [why for _, why in ad_hoc] == ["environment mine (/opt/jax/bin/python) --devices 1"]
    # Gone from matrix.toml (or not asked for): an ad-hoc run like any other interpreter's.
    assert [why for _, why in split_ad_hoc([named], configured)[1]] == ["environment mine (/opt/jax/bin/python)"]
    assert differences(_entry().record, configured["scaling"], environment="mine") == "not environment mine"


def test_an_existing_interpreter_s_record_never_makes_a_release_current(tmp_path: Path) -> None:
    configured = {"devices": [1, 2]}
    existing = make_record("0.4.35", parameters=configured, install={**EXISTING, **ENVIRONMENT})
    records.write_record(existing, tmp_path)
    assert newest_records_here(tmp_path, "cpu", {"scaling": configured}) == {}
    assert not is_current(existing, configured, backend="cpu", **ENVIRONMENT)


def test_processes_mean_the_same_for_every_check() -> None:
    # One rule for currency and for the report: a correctness record (no processes at all) ran one process.
    correctness = _entry(check="correctness", parameters={"matrix_size": 20})
    assert differences(correctness.record, {"matrix_size": 20}) == ""
    assert differences(correctness.record, {"matrix_size": 20, "processes": 2}) == "--processes 1"


def make_record(jax: str, backend: str = "cpu", machine: str | None = None, python: str = "3.11",
                parameters: dict[str, Any] | None = None, created: str = "2026-01-01T00:00:00Z",
                **fields: Any) -> dict[str, Any]:
    record = {"schema": records.SCHEMA, "kit_version": __version__, "check": "scaling",
              "requested": {"jax": jax, "backend": backend}, "status": "ran", "verdict": "unaffected",
              "install": {"python": python, "requirements": [f"jax[cpu]=={jax}", "scipy"],
                          "exclude_newer": "2024-11-05T20:56:00Z"},
              "parameters": parameters or {"devices": [1, 2]},
              "host": {"machine_id": machine or records.machine_id()}, "created": created}
    record.update(fields)
    return record


ENVIRONMENT: dict[str, Any] = {"python": "3.11", "requirements": ["jax[cpu]==0.4.35", "scipy"],
                               "exclude_newer": "2024-11-05T20:56:00Z"}


def test_newest_records_here_keeps_this_machine_and_backend_only(tmp_path: Path) -> None:
    older = make_record("0.4.35", created="2026-01-01T00:00:00Z")
    newer = make_record("0.4.35", created="2026-01-02T00:00:00Z", python="3.12")
    for record in (older, newer, make_record("0.4.35", machine="another-machine"), make_record("0.6.0", backend="cuda")):
        records.write_record(record, tmp_path)
    asked = {"scaling": {"devices": [1, 2]}}
    newest = newest_records_here(tmp_path, "cpu", asked)
    assert list(newest) == [("scaling", "0.4.35")]
    assert newest[("scaling", "0.4.35")]["install"]["python"] == "3.12"
    assert list(newest_records_here(tmp_path, "cuda", asked)) == [("scaling", "0.6.0")]
    assert newest_records_here(tmp_path, "cpu", {"correctness": {}}) == {}


def test_an_ad_hoc_run_neither_makes_a_cell_current_nor_stale(tmp_path: Path) -> None:
    # issue 18: `-- --devices 1,2` after a matrix run made the next matrix rerun the cell it had called current.
    configured = {"devices": [1, 2, 4]}
    matrix_run = make_record("0.4.35", parameters=configured, created="2026-01-01T00:00:00Z")
    ad_hoc = make_record("0.4.35", parameters={"devices": [1, 2]}, created="2026-01-02T00:00:00Z")
    for record in (matrix_run, ad_hoc):
        records.write_record(record, tmp_path)
    newest = newest_records_here(tmp_path, "cpu", {"scaling": configured})
    assert newest[("scaling", "0.4.35")] == matrix_run
    assert is_current(newest[("scaling", "0.4.35")], configured, backend="cpu", **ENVIRONMENT)
    # And the ad-hoc run is the newest of its own parameters, for whoever asks them (bisect's probes).
    assert newest_records_here(tmp_path, "cpu", {"scaling": {"devices": [1, 2]}})[("scaling", "0.4.35")] == ad_hoc


@pytest.mark.parametrize(("change", "current"), [
    ({}, True),
    ({"python": "3.12"}, False),
    ({"exclude_newer": "2025-01-01T00:00:00Z"}, False),
    ({"parameters": {"devices": [1, 2, 4]}}, False),
    ({"parameters": {"unknown_key": 1}}, False),
    ({"preset": "thread"}, False),
])
def test_a_record_is_current_only_for_the_same_environment_and_parameters(change: dict[str, Any], current: bool) -> None:
    record = make_record("0.4.35")
    environment = {**ENVIRONMENT, **{k: v for k, v in change.items() if k in ENVIRONMENT}}
    parameters = change.get("parameters", {"devices": [1, 2]})
    assert is_current(record, parameters, backend="cpu", preset=change.get("preset"), **environment) is current


def test_what_is_never_current() -> None:
    assert not is_current(make_record("0.4.35", kit_version="0.0.9"), {"devices": [1, 2]}, backend="cpu", **ENVIRONMENT)
    assert not is_current(make_record("0.4.35", status="crashed"), {}, backend="cpu", **ENVIRONMENT)
    assert not is_current(make_record("0.4.35", machine="another-machine"), {}, backend="cpu", **ENVIRONMENT)
    assert not is_current(make_record("0.4.35"), {}, backend="cuda", **ENVIRONMENT)
    # A release that could not be installed stays so until its install plan changes.
    assert is_current(make_record("0.4.35", status="not-installable"), {"devices": [1, 2]}, backend="cpu",
                      **ENVIRONMENT)


def test_a_multi_process_record_is_never_current_for_a_single_process_cell() -> None:
    two = make_record("0.4.35", parameters={"devices": [1, 2, 4], "processes": 2})
    # matrix.toml leaves processes at 1 (absent): the 2-process run measured another cell.
    assert not is_current(two, {"devices": [1, 2, 4]}, backend="cpu", **ENVIRONMENT)
    assert is_current(two, {"devices": [1, 2, 4], "processes": 2}, backend="cpu", **ENVIRONMENT)
    # Records from before the parameter existed ran one process.
    assert is_current(make_record("0.4.35", parameters={"devices": [1, 2, 4]}), {"devices": [1, 2, 4], "processes": 1},
                      backend="cpu", **ENVIRONMENT)


def test_the_fingerprint_names_what_decides_the_environment() -> None:
    record = make_record("0.4.35")
    assert records.record_fingerprint(record) == records.environment_fingerprint(
        backend="cpu", machine=records.machine_id(), **ENVIRONMENT)
    # A hand-edited record of odd shapes still has a fingerprint (it is just not current).
    assert records.record_fingerprint({**record, "install": {"requirements": "jax", "python": 3}})
