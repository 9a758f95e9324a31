"""kit.records.origin: a record of a user's own interpreter says so, and a named environment's cell is its name."""

from __future__ import annotations

from pathlib import Path

from kit.records import (
    EnvironmentCell,
    LoadedRecord,
    environment_cell,
    environment_name,
    existing_interpreter,
    newest_per_environment,
)
from tests.record_samples import make_record

EXISTING_INSTALL = {"environment": "existing", "interpreter": "/opt/jax/bin/python", "name": None,
                    "packages": {"jax": "0.4.35", "jaxlib": "0.4.35"}, "packages_fingerprint": "f" * 16}


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
    newest, older = newest_per_environment(entries)
    assert [e.record for e in newest.values()] == [upgraded]
    assert [e.record for e in older] == [before]
