"""kit/records/json_text.py: any text read back as JSON values or one sentence, never another exception."""

from __future__ import annotations

from pathlib import Path

import pytest

from kit.records.json_text import MAX_DEPTH, JsonTextError, decode, nesting_depth, read_json, read_text


def _nested(depth: int) -> str:
    return "[" * depth + "]" * depth


@pytest.mark.parametrize("text", ["", "   ", "\n\t\r\n"])
def test_empty_or_blank_text_is_an_empty_file(text: str) -> None:
    with pytest.raises(JsonTextError, match="^empty file$"):
        decode(text)


def test_torn_text_says_where_it_broke() -> None:
    # The line and column let a reader find the tear in a long record.
    with pytest.raises(JsonTextError, match=r"^not valid JSON \(truncated or corrupt\?\): Expecting ',' delimiter "
                                            r"\(line 2, column 1\)$"):
        decode('{"a": 1\n"b": 2}')


def test_nan_and_infinities_become_null_anywhere() -> None:
    # A later strict writer would refuse them: they must not survive decode.
    assert decode('{"m": [NaN, Infinity, -Infinity, 1.5], "n": {"x": NaN}}') == {"m": [None, None, None, 1.5],
                                                                                 "n": {"x": None}}


def test_nesting_of_exactly_max_depth_is_read_and_one_more_is_refused() -> None:
    # Boundary of the depth rule: an off-by-one would refuse the deepest allowed value or let one more through.
    assert nesting_depth(decode(_nested(MAX_DEPTH))) == MAX_DEPTH
    with pytest.raises(JsonTextError, match=rf"^nested more than {MAX_DEPTH} levels deep"):
        decode(_nested(MAX_DEPTH + 1))


def test_nesting_past_the_recursion_limit_is_a_sentence_not_a_recursion_error() -> None:
    with pytest.raises(JsonTextError, match=r"^nested too deeply to read \(the kit reads up to 64 levels\)$"):
        decode(_nested(200_000))


def test_an_integer_past_pythons_digit_limit_is_a_sentence() -> None:
    # Python refuses to convert 4300+ digits (3.11+, and 3.9.14+ where it was backported) with a ValueError;
    # the message differs by version ("(4300 digits)" from 3.11, "(4300)" before), so only its start is matched.
    try:
        value = decode("9" * 5000)
    except JsonTextError as error:
        assert str(error).startswith("not usable JSON: Exceeds the limit (4300")
        assert "\n" not in str(error)
        assert len(str(error)) <= len("not usable JSON: ") + 200
    else:
        assert value == int("9" * 5000)  # a Python from before the limit reads it


@pytest.mark.parametrize("value, depth", [(1, 0), ("s", 0), (None, 0), ([], 1), ({}, 1), ([1, [2]], 2),
                                          ({"a": {"b": [[]]}}, 4), ([[], [[[]]]], 4)])
def test_nesting_depth_counts_arrays_and_objects(value: object, depth: int) -> None:
    # The deepest branch counts, not the first nor the last one walked.
    assert nesting_depth(value) == depth


def test_nesting_depth_stops_counting_past_the_maximum() -> None:
    deep: list[object] = []
    for _ in range(10_000):
        deep = [deep]
    assert nesting_depth(deep) == MAX_DEPTH + 1


def test_read_text_refuses_a_file_over_its_limit_and_reads_one_at_it(tmp_path: Path) -> None:
    path = tmp_path / "r.json"
    path.write_text('{"a": 1}')  # 8 bytes
    assert read_text(path, limit=8) == '{"a": 1}'
    with pytest.raises(JsonTextError, match=r"^8 bytes, larger than the 7 the kit reads$"):
        read_text(path, limit=7)


def test_read_text_names_the_first_byte_that_is_not_utf8(tmp_path: Path) -> None:
    path = tmp_path / "r.json"
    path.write_bytes(b'{"a": "ok \xff"}')
    with pytest.raises(JsonTextError, match=r"^unreadable: not UTF-8 text \(byte 10\)$"):
        read_text(path)


def test_missing_files_and_folders_are_unreadable_with_the_systems_words(tmp_path: Path) -> None:
    with pytest.raises(JsonTextError, match="^unreadable: No such file or directory$"):
        read_json(tmp_path / "absent.json")
    (tmp_path / "folder.json").mkdir()
    with pytest.raises(JsonTextError, match="^unreadable: Is a directory$"):
        read_json(tmp_path / "folder.json")


def test_read_json_returns_any_json_value_not_only_objects(tmp_path: Path) -> None:
    # Callers decide what top level they accept (a record must be an object; a lock checks its own).
    path = tmp_path / "r.json"
    path.write_text("[1, 2.5, \"x\", true, null]")
    assert read_json(path) == [1, 2.5, "x", True, None]
