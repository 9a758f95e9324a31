"""kit/json_types.py: a value read from a JSON file is narrowed where it is read, whatever the file holds."""

from __future__ import annotations

from types import MappingProxyType

from kit.json_types import as_list, as_number, as_object, as_text, json_form


def test_a_value_of_another_kind_reads_as_none_of_it() -> None:
    assert as_object({"a": 1}) == {"a": 1} and as_object([1]) == {} and as_object(None) == {}
    assert as_list([1, "x"]) == [1, "x"] and as_list((1,)) == [1] and as_list({"a": 1}) == [] and as_list("ab") == []
    assert as_number(2) == 2.0 and as_number(1.5) == 1.5
    assert as_number(True) == 0.0 and as_number("3") == 0.0 and as_number(None, 1.0) == 1.0  # a bool is no number
    assert as_text("a") == "a" and as_text(1) == "" and as_text(None) == ""


def test_an_object_is_a_copy_of_any_mapping_never_the_callers_own() -> None:
    read = {"a": {"b": 1}}
    kept = as_object(read)
    kept["c"] = 2
    assert read == {"a": {"b": 1}}  # a reader that adds to what it narrowed leaves the file's value alone
    assert as_object(MappingProxyType({"a": 1})) == {"a": 1}  # a record's sub-object read through Record


def test_the_json_form_is_what_a_file_reads_back() -> None:
    assert json_form({"b": (1, 2), "a": {"c": None}}) == {"a": {"c": None}, "b": [1, 2]}
    assert list(json_form({"b": 1, "a": 2})) == ["a", "b"]
