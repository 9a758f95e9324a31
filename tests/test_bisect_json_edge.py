"""kit/bisect/json_edge.py: a value read from a JSON file is narrowed where it is read, whatever the file holds."""

from __future__ import annotations

from kit.bisect.json_edge import as_list, as_number, as_object, json_form


def test_a_value_of_another_kind_reads_as_none_of_it() -> None:
    assert as_object({"a": 1}) == {"a": 1} and as_object([1]) == {} and as_object(None) == {}
    assert as_list([1, "x"]) == [1, "x"] and as_list((1,)) == [1] and as_list({"a": 1}) == [] and as_list("ab") == []
    assert as_number(2) == 2.0 and as_number(1.5) == 1.5
    assert as_number(True) == 0.0 and as_number("3") == 0.0 and as_number(None, 1.0) == 1.0  # a bool is no number


def test_the_json_form_is_what_a_file_reads_back() -> None:
    assert json_form({"b": (1, 2), "a": {"c": None}}) == {"a": {"c": None}, "b": [1, 2]}
    assert list(json_form({"b": 1, "a": 2})) == ["a", "b"]
