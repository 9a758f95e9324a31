"""kit.records.identity: which cell a record measures, on which machine, in whose environment; the newest per cell."""

from __future__ import annotations

from pathlib import Path

from kit.records import (CellKey, EnvironmentCell, LoadedRecord, cell_key, environment_cell, environment_name,
                         existing_interpreter, load_records, machine_id, newest_by, newest_per_cell,
                         packages_fingerprint)
from tests.test_records_store import FIXTURES, make_record


def test_cell_key_uses_requested_release_and_jax_backend_name() -> None:
    ran = make_record(requested={"jax": "0.5.3", "backend": "cuda"}, environment={"backend": "gpu"})
    never_started = make_record(requested={"jax": "0.5.3", "backend": "cuda"}, environment={}, status="not-installable")
    assert cell_key(ran) == cell_key(never_started) == CellKey("scaling", "0.5.3", "gpu", "abc123abc123")


def test_newest_per_cell_keeps_older_as_history() -> None:
    entries = load_records(FIXTURES / "conflicting-two-runs-same-cell").entries
    newest, older = newest_per_cell(entries)
    [winner] = newest.values()
    assert winner.record["verdict"] == "affected"
    assert [e.record["verdict"] for e in older] == ["inconclusive"]


def test_machine_id_is_stable_and_short() -> None:
    assert machine_id() == machine_id()
    assert len(machine_id()) == 12
    int(machine_id(), 16)


EXISTING_INSTALL = {"environment": "existing", "interpreter": "/opt/jax/bin/python", "name": None,
                    "packages": {"jax": "0.4.35", "jaxlib": "0.4.35"}, "packages_fingerprint": "f" * 16}


def test_a_package_set_has_one_fingerprint_however_it_is_spelled_or_ordered() -> None:
    one = packages_fingerprint({"jax": "0.4.35", "Jax_Cuda12.Plugin": "0.4.35", "numpy": "2.1.3"})
    same = packages_fingerprint({"numpy": "2.1.3", "jax-cuda12-plugin": "0.4.35", "JAX": "0.4.35"})
    assert one == same and len(one) == 16
    assert packages_fingerprint({"jax": "0.4.35", "jax-cuda12-plugin": "0.4.35", "numpy": "2.2.0"}) != one
    assert packages_fingerprint({"jax": "0.4.35", "jax-cuda12-plugin": "0.4.35"}) != one


def test_a_record_of_an_existing_interpreter_says_so_and_names_its_environment() -> None:
    built = make_record()
    existing = make_record(install=EXISTING_INSTALL)
    named = make_record(install={**EXISTING_INSTALL, "name": "mine"})
    assert (existing_interpreter(built), environment_name(built)) == (None, None)
    assert (existing_interpreter(existing), environment_name(existing)) == ("/opt/jax/bin/python", None)
    assert environment_name(named) == "mine"
    # A hand-edited record naming an environment without being existing is the kit's build.
    assert environment_name(make_record(install={"name": "mine"})) is None


def test_a_named_environment_s_cell_is_its_name_not_the_release_it_holds() -> None:
    before = make_record(install={**EXISTING_INSTALL, "name": "mine"}, created="2026-01-01T00:00:00Z")
    upgraded = make_record(install={**EXISTING_INSTALL, "name": "mine"}, requested={"jax": "0.4.36", "backend": "cpu"},
                           created="2026-02-01T00:00:00Z")
    assert environment_cell(before) == environment_cell(upgraded) == EnvironmentCell("scaling", "mine", "cpu",
                                                                                     "abc123abc123")
    entries = [LoadedRecord(Path(f"{i}.json"), record) for i, record in enumerate((before, upgraded))]
    newest, older = newest_by(entries, environment_cell)
    assert [e.record for e in newest.values()] == [upgraded] and [e.record for e in older] == [before]
