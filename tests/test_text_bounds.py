"""kit/text_bounds.py: how much text is kept, and how a cut says what it cut."""

from __future__ import annotations

import copy

import pytest

from kit.text_bounds import REASON_CHARS, STRING_CHARS, bound_record, cut, cut_marker, cut_strings, human_size


@pytest.mark.parametrize("nbytes, text", [(0, "0 bytes"), (1, "1 byte"), (2, "2 bytes"), (999, "999 bytes"),
                                          (1000, "1.0 kB"), (1049, "1.0 kB"), (999_949, "999.9 kB"),
                                          (999_950, "1.0 MB"), (19_900_000, "19.9 MB"), (999_950_000, "1.0 GB"),
                                          (5 * 10 ** 12, "5000.0 GB")])
def test_human_size_at_its_unit_boundaries(nbytes: int, text: str) -> None:
    # 999,950 bytes would print "1000.0 kB" if the unit were chosen before rounding.
    assert human_size(nbytes) == text


def test_text_at_the_limit_is_kept_whole_and_one_more_is_cut() -> None:
    assert cut("x" * 10, 10) == "x" * 10
    assert cut("x" * 11, 10) == "x" * 10 + "… [cut 1 byte]"


def test_a_cut_counts_bytes_not_characters() -> None:
    # Five "é" past the limit are 10 bytes of UTF-8.
    assert cut("a" * 4 + "é" * 5, 4) == "aaaa… [cut 10 bytes]"


def test_a_second_cut_says_the_whole_amount() -> None:
    once = cut("x" * 3_000_000, 1000)
    assert once.endswith("… [cut 3.0 MB]")
    twice = cut(once, 300)
    assert twice == "x" * 300 + cut_marker(700 + 3_000_000)
    assert twice.endswith("… [cut 3.0 MB]")
    assert twice.count("[cut") == 1


def test_text_that_only_looks_cut_inside_is_not_read_as_an_earlier_cut() -> None:
    # The marker counts only at the very end: one in the middle is the script's own text.
    text = "… [cut 5.0 MB] and more text after it"
    assert cut(text, 10) == text[:10] + cut_marker(len(text[10:].encode()))


def test_short_text_ending_in_a_marker_is_left_as_it_is() -> None:
    assert cut("abc… [cut 2 bytes]", 100) == "abc… [cut 2 bytes]"


def test_cut_strings_cuts_keys_and_values_at_any_depth_and_leaves_other_values() -> None:
    value = {"k" * 20: ["v" * 20, 3, None, True, 1.5, ("t" * 20,)]}
    assert cut_strings(value, 5) == {"kkkkk… [cut 15 bytes]": ["vvvvv… [cut 15 bytes]", 3, None, True, 1.5,
                                                                ["ttttt… [cut 15 bytes]"]]}


def test_cut_strings_does_not_change_what_it_was_given() -> None:
    value = {"a": ["x" * 20, {"b": "y" * 20}]}
    before = copy.deepcopy(value)
    cut_strings(value, 5)
    assert value == before


def test_cut_strings_goes_deeper_than_the_recursion_limit() -> None:
    deep: list = ["s" * 20]
    for _ in range(50_000):
        deep = [deep]
    result = cut_strings(deep, 5)
    for _ in range(50_000):
        result = result[0]
    assert result == ["sssss… [cut 15 bytes]"]


def test_a_record_keeps_a_shorter_reason_than_its_other_strings() -> None:
    record = {"reason": "r" * 5000, "evidence": {"note": "n" * 20_000}, "status": "crashed"}
    bounded = bound_record(record)
    assert bounded["reason"] == cut("r" * 5000, REASON_CHARS)
    assert bounded["evidence"]["note"] == cut("n" * 20_000, STRING_CHARS)
    assert bounded["status"] == "crashed"
    assert record["reason"] == "r" * 5000


def test_a_reason_that_is_not_text_is_left_to_the_schema() -> None:
    assert bound_record({"reason": None, "x": "short"}) == {"reason": None, "x": "short"}
