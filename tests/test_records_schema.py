"""kit/records/schema.py: what a record is, how an older one is upgraded, and the one sentence for a bad one."""

from __future__ import annotations

import json
from typing import Any

import pytest

from kit.records import schema
from kit.records.schema import SCHEMA, STATUSES, RecordError, migrate, parse_record, validate


def _record(**changes: Any) -> dict[str, Any]:
    record: dict[str, Any] = {"schema": SCHEMA, "kit_version": "0.1.0", "check": "scaling", "status": "ran",
                              "verdict": "unaffected", "created": "2026-01-01T00:00:00Z",
                              "requested": {"jax": "0.6.0", "backend": "cpu"}, "environment": {}, "evidence": {}}
    record.update(changes)
    return record


def _why(record: Any) -> str:
    with pytest.raises(RecordError) as raised:
        parse_record(json.dumps(record))
    return str(raised.value)


def test_a_good_record_parses_to_itself() -> None:
    assert parse_record(json.dumps(_record())) == _record()


@pytest.mark.parametrize("status", STATUSES)
def test_every_status_the_kit_writes_is_accepted(status: str) -> None:
    assert parse_record(json.dumps(_record(status=status)))["status"] == status


def test_bad_text_and_a_top_level_that_is_no_object_are_sentences() -> None:
    with pytest.raises(RecordError, match="^empty file$"):
        parse_record("")
    assert _why([1]) == "not a record: top level is a JSON list, not an object"


@pytest.mark.parametrize("value, found", [(None, "None"), ("1", "'1'"), (True, "True"), (1.0, "1.0")])
def test_a_schema_that_is_not_a_whole_number_is_refused(value: Any, found: str) -> None:
    # true is an int in Python: without the bool test it would read as schema 1.
    assert _why(_record(schema=value)) == f"no usable 'schema' field (found {found})"


def test_a_newer_schema_asks_for_a_newer_kit() -> None:
    assert _why(_record(schema=SCHEMA + 1)) == (f"written by a newer kit (schema {SCHEMA + 1}; this kit reads up to "
                                                f"{SCHEMA}); upgrade the kit to read it")


def test_an_old_schema_without_a_migration_is_refused_not_read_as_current() -> None:
    assert _why(_record(schema=SCHEMA - 1)) == f"schema {SCHEMA - 1} is too old and no migration to {SCHEMA} exists"


def test_migrations_run_in_order_and_do_not_touch_the_callers_record(monkeypatch: pytest.MonkeyPatch) -> None:
    # Two steps: each must see the previous step's output, and the schema must advance after each.
    seen: list[int] = []

    def step(number: int) -> Any:
        def upgrade(record: dict[str, Any]) -> dict[str, Any]:
            seen.append(record["schema"])
            record.setdefault("steps", []).append(number)
            return record
        return upgrade

    monkeypatch.setitem(schema.MIGRATIONS, SCHEMA - 2, step(1))
    monkeypatch.setitem(schema.MIGRATIONS, SCHEMA - 1, step(2))
    old = _record(schema=SCHEMA - 2)
    upgraded = migrate(old)
    assert upgraded["schema"] == SCHEMA
    assert upgraded["steps"] == [1, 2]
    assert seen == [SCHEMA - 2, SCHEMA - 1]
    assert old["schema"] == SCHEMA - 2


@pytest.mark.parametrize("name", ["check", "status", "created"])
def test_a_missing_or_empty_required_text_is_named(name: str) -> None:
    # An empty text is as useless as none (a cell named ""); it comes first in the reason.
    assert _why(_record(**{name: ""})).startswith(f"missing or non-text field {name!r}")
    bad = _record()
    del bad[name]
    assert _why(bad) == f"missing or non-text field {name!r}"


def test_requested_must_say_which_release() -> None:
    assert _why(_record(requested={"backend": "cpu"})) == "missing 'requested.jax' (which release the record measures)"
    assert _why(_record(requested="0.6.0")) == "missing 'requested.jax' (which release the record measures)"
    assert _why(_record(requested={"jax": "0.6.0", "preset": 3})) == ("field 'requested.backend' or "
                                                                      "'requested.preset' is not text")
    assert validate(_record(requested={"jax": "0.6.0", "backend": None, "preset": None}))


def test_an_unknown_status_and_verdict_are_quoted_short() -> None:
    # A hostile value must not make the reason huge: it is quoted to 60 characters.
    why = _why(_record(status="x" * 500))
    assert why.startswith("unknown status 'xxx")
    assert "…" in why
    assert len(why) < 200
    assert _why(_record(verdict="maybe")) == "unknown verdict 'maybe'"
    assert validate(_record(verdict=None))


def test_every_problem_is_listed_not_only_the_first() -> None:
    why = _why(_record(check=1, environment=[], reason=5))
    assert why == "missing or non-text field 'check'; field 'environment' is not an object; field 'reason' is not text"


def test_duration_must_be_a_number_and_not_a_boolean() -> None:
    assert _why(_record(duration_s=True)) == "field 'duration_s' is not a number"
    assert _why(_record(duration_s="3")) == "field 'duration_s' is not a number"
    assert validate(_record(duration_s=0))


def test_the_summary_must_be_an_object_where_there_is_one() -> None:
    assert _why(_record(evidence={"summary": [1]})) == "field 'evidence.summary' is not an object"
    assert validate(_record(evidence={"summary": None}))


def test_metrics_hold_lists_of_numbers_or_null() -> None:
    assert validate(_record(metrics={"t": {"samples": [1, 2.5, None], "unit": "s", "better": "higher"}}))
    assert _why(_record(metrics={"t": {"samples": [1, "2"]}})) == "metric 't': samples are not a list of numbers"
    assert _why(_record(metrics={"t": {"samples": [True]}})) == "metric 't': samples are not a list of numbers"
    assert _why(_record(metrics={"t": [1, 2]})) == "metric 't': samples are not a list of numbers"
    assert _why(_record(metrics={"t": {"samples": [1], "better": "faster"}})) == (
        "metric 't': unit is not text or better is not lower/higher")
    assert _why(_record(metrics={"t": {"samples": [1], "unit": 3}})) == (
        "metric 't': unit is not text or better is not lower/higher")


def test_an_integer_too_long_to_print_is_named_not_raised() -> None:
    # repr() of a 5000-digit integer raises ValueError on Python 3.11+; the reason must still be a sentence.
    record = _record()
    record["status"] = 10 ** 5000
    with pytest.raises(RecordError) as raised:
        validate(record)
    assert "missing or non-text field 'status'" in str(raised.value)
    record = _record(verdict=10 ** 5000)
    with pytest.raises(RecordError, match="^unknown verdict (a number too long to print|[0-9]{59}…)$"):
        validate(record)
