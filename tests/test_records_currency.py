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
    assert len(in_matrix) == 1
    assert ad_hoc == []


def test_without_a_matrix_every_record_counts() -> None:
    loaded = load_records(FIXTURES / "cpu-laptop-sweep")
    assert build_report(loaded.entries).ad_hoc == []
    odd = build_report(loaded.entries, configured={"scaling": {"batch": 1}})
    assert {run.check for run in odd.ad_hoc} == {"scaling"}
    assert odd.checks == ["correctness"]


def test_processes_other_than_the_matrix_s_make_a_run_ad_hoc_and_absent_means_one() -> None:
    base = {"devices": [1, 2, 4], "batch": 4096, "repeats": 7}
    old = _entry()  # from before the parameter: one process
    one = _entry(parameters={**base, "processes": 1})
    two = _entry(parameters={**base, "processes": 2})
    in_matrix, ad_hoc = split_ad_hoc([old, one, two], {"scaling": base})
    assert in_matrix == [old, one]
    assert [why for _, why in ad_hoc] == ["--processes 2"]
    in_matrix, ad_hoc = split_ad_hoc([old, one, two], {"scaling": {**base, "processes": 1}})
    assert in_matrix == [old, one]
    in_matrix, ad_hoc = split_ad_hoc([old, one, two], {"scaling": {**base, "processes": 2}})
    assert in_matrix == [two]
    assert [why for _, why in ad_hoc] == ["--processes 1", "--processes 1"]


def test_not_installable_is_an_answer_whatever_was_asked() -> None:
    record = _entry(status="not-installable", parameters={"devices": [1]}).record
    assert differences(record, {"devices": [1, 2, 4]}) == ""
    assert differences(record, {}, preset="thread") == ""


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
    assert split_ad_hoc([existing], None)[0] == []
    assert split_ad_hoc([existing], {"qr": {}})[0] == []


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
    # Even with the very identity a run of the kit's own build would have: it ran in another installation.
    existing = make_record("0.4.35", parameters=configured, install={**EXISTING, "python": "3.11"})
    records.write_record(existing, tmp_path)
    assert newest_records_here(tmp_path, "cpu", {"scaling": configured}) == {}
    assert not is_current(existing, identity(parameters=configured))
    assert records.staleness(existing, identity(parameters=configured)).startswith("it ran in another environment")


def test_processes_mean_the_same_for_every_check() -> None:
    # One rule for currency and for the report: a correctness record (no processes at all) ran one process.
    correctness = _entry(check="correctness", parameters={"matrix_size": 20})
    assert differences(correctness.record, {"matrix_size": 20}) == ""
    assert differences(correctness.record, {"matrix_size": 20, "processes": 2}) == "--processes 1"


def identity(jax: str = "0.4.35", backend: str = "cpu", parameters: dict[str, Any] | None = None,
             preset: str | None = None, **changes: Any) -> records.Identity:
    """The identity of a scaling run (override any of run_identity's arguments)."""
    arguments: dict[str, Any] = {
        "subject": {"check": "scaling", "parameters": {"processes": 1, **(parameters or {"devices": [1, 2]})},
                    "preset": preset, "kit_version": __version__},
        "jax": jax, "backend": backend, "python": "3.11",
        "packages": {"jax": jax, "jaxlib": jax, "numpy": "2.1.3", "scipy": "1.14.1"},
        "requirements": [f"jax[cpu]=={jax}", "scipy"], "exclude_newer": "2024-11-05T20:56:00Z",
        "hardware": {"cpu": "AMD EPYC 7B13"}, "variables": {}}
    arguments.update(changes)
    return records.run_identity(**arguments)


def make_record(jax: str, backend: str = "cpu", machine: str | None = None, python: str = "3.11",
                parameters: dict[str, Any] | None = None, created: str = "2026-01-01T00:00:00Z",
                **fields: Any) -> dict[str, Any]:
    record = {"schema": records.SCHEMA, "kit_version": __version__, "check": "scaling",
              "requested": {"jax": jax, "backend": backend}, "status": "ran", "verdict": "unaffected",
              "install": {"python": python, "requirements": [f"jax[cpu]=={jax}", "scipy"],
                          "exclude_newer": "2024-11-05T20:56:00Z"},
              "parameters": parameters or {"devices": [1, 2]},
              "identity": identity(jax, backend, parameters, python=python).to_json(),
              "host": {"machine_id": machine or records.machine_id()}, "created": created}
    record.update(fields)
    return record


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
    # Once, `-- --devices 1,2` after a matrix run made the next matrix rerun the cell it had called current.
    configured = {"devices": [1, 2, 4]}
    matrix_run = make_record("0.4.35", parameters=configured, created="2026-01-01T00:00:00Z")
    ad_hoc = make_record("0.4.35", parameters={"devices": [1, 2]}, created="2026-01-02T00:00:00Z")
    for record in (matrix_run, ad_hoc):
        records.write_record(record, tmp_path)
    newest = newest_records_here(tmp_path, "cpu", {"scaling": configured})
    assert newest[("scaling", "0.4.35")] == matrix_run
    assert is_current(newest[("scaling", "0.4.35")], identity(parameters=configured))
    # And the ad-hoc run is the newest of its own parameters, for whoever asks them (bisect's probes).
    assert newest_records_here(tmp_path, "cpu", {"scaling": {"devices": [1, 2]}})[("scaling", "0.4.35")] == ad_hoc


@pytest.mark.parametrize(("change", "why"), [
    ({}, ""),
    ({"python": "3.12"}, "Python 3.11 there, 3.12 here"),
    ({"exclude_newer": "2025-01-01T00:00:00Z"}, "exclude_newer 2024-11-05T20:56:00Z there, 2025-01-01T00:00:00Z here"),
    ({"parameters": {"devices": [1, 2, 4]}}, 'what ran: parameters {"devices": [1, 2], "processes": 1} there, '
                                             '{"devices": [1, 2, 4], "processes": 1} here'),
    ({"preset": "thread"}, "what ran: preset none there, thread here"),
    ({"packages": {"jax": "0.4.35", "jaxlib": "0.4.35", "numpy": "2.2.0", "scipy": "1.14.1"}},
     "numpy 2.1.3 there, 2.2.0 here"),
    ({"hardware": {"cpu": "Intel(R) Xeon(R) Processor"}}, "cpu AMD EPYC 7B13 there, Intel(R) Xeon(R) Processor here"),
    ({"variables": {"JAX_ENABLE_X64": "1"}}, "JAX_ENABLE_X64 unset there, 1 here"),
    ({"backend": "cuda", "hardware": {"cpu": "AMD EPYC 7B13", "gpu": "1 x NVIDIA H100", "gpu_driver": "550.54"}},
     "backend cpu there, cuda here; gpu none there, 1 x NVIDIA H100 here; gpu_driver none there, 550.54 here"),
])
def test_a_record_is_current_only_under_the_same_identity(change: dict[str, Any], why: str) -> None:
    # Whatever could change the outcome: parameters, packages, hardware, the JAX/XLA variables set.
    record = make_record("0.4.35")
    assert records.staleness(record, identity(**change)) == why
    assert is_current(record, identity(**change)) is (why == "")


def test_what_is_never_current() -> None:
    here = identity()
    assert records.staleness(make_record("0.4.35", kit_version="0.0.9"), here) == \
        f"made by kit 0.0.9, this is kit {__version__}"
    assert records.staleness(make_record("0.4.35", status="crashed"), here) == "it crashed: worth another try"
    old = make_record("0.4.35")
    del old["identity"]  # made before records held their identity: what it depended on is unknown
    assert "made before records held their identity" in records.staleness(old, here)
    assert not is_current(make_record("0.4.35", identity={"schema": 99}), here)


def test_a_release_that_did_not_install_stays_so_until_its_install_request_changes() -> None:
    record = make_record("0.4.35", status="not-installable",
                         identity=identity(python=None, packages={}).to_json())
    # Whatever was asked of it, on whatever hardware, with whatever variables set.
    assert is_current(record, identity(parameters={"devices": [1]}, hardware={"cpu": "other"},
                                       variables={"JAX_ENABLE_X64": "1"}, packages={}))
    assert records.staleness(record, identity(requirements=["jax[cpu]==0.4.35", "scipy", "numpy==1.26.4"])) == \
        'requirements ["jax[cpu]==0.4.35", "scipy"] there, ["jax[cpu]==0.4.35", "numpy==1.26.4", "scipy"] here'


def test_a_multi_process_record_is_never_current_for_a_single_process_cell() -> None:
    two = make_record("0.4.35", identity=identity(parameters={"devices": [1, 2, 4], "processes": 2}).to_json())
    # matrix.toml leaves processes at 1 (absent): the 2-process run measured another cell.
    assert not is_current(two, identity(parameters={"devices": [1, 2, 4]}))
    assert is_current(two, identity(parameters={"devices": [1, 2, 4], "processes": 2}))


def test_a_record_compiled_for_a_target_is_ad_hoc_and_says_so_by_the_targets_name() -> None:
    # Its parameters are the matrix's and one more: extra keys alone would count it as the matrix's tpu cell.
    target = ('{"chip":"v5e","devices":4,"host_bounds":"2,2,1","name":"tpu:v5e:2x2","platform":"tpu",'
              '"title":"TPU v5e 2x2 (4 devices)","topology":"v5e:2x2"}')
    record = {"status": "ran", "requested": {}, "parameters": {"devices": [1, 2, 4], "target": target}}
    assert differences(record, {"devices": [1, 2, 4]}) == \
        "--target tpu:v5e:2x2 (compiled for TPU v5e 2x2 (4 devices), not run)"
    assert differences(record, {"devices": [1, 2, 4], "target": target}) == ""
    too_old = {**record, "status": "not-installable"}  # not installable for the target, not for the backend
    assert differences(too_old, {"devices": [1, 2, 4]}) == \
        "--target tpu:v5e:2x2 (compiled for TPU v5e 2x2 (4 devices), not run)"
