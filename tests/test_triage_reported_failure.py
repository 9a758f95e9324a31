"""kit/triage/reported_failure.py: the exception or the wrong value a bug report describes.

tests/test_triage_report_reading.py reads the example reports and a chained traceback; here are the choices
between several places a failure could be read from, and the limits of what counts as a stated value.
"""

from __future__ import annotations

import pytest

from kit.triage.issue_text import code_blocks
from kit.triage.reported_failure import ReportedFailure, WrongValue, reported_failure, wrong_value

TRACEBACK = "Traceback (most recent call last):\n  File \"r.py\", line 3, in <module>\n{last}"


def read(text: str) -> ReportedFailure:
    return reported_failure(text, code_blocks(text))


def test_the_last_traceback_counts_when_a_report_pastes_two() -> None:
    # The first is often an earlier attempt ("I also tried ..."); the run that ended last is the one reported.
    text = (f"```\n{TRACEBACK.format(last='ValueError: first try')}\n```\nthen\n"
            f"```\n{TRACEBACK.format(last='TypeError: second try')}\n```\n")
    failure = read(text)
    assert failure.exception is not None
    assert failure.exception.headline() == "TypeError: second try"
    assert failure.source == "block 2"


def test_a_traceback_pasted_without_a_fence_is_read_from_the_prose() -> None:
    text = f"It fails like this:\n\n{TRACEBACK.format(last='RuntimeError: boom')}\n\nAny idea?"
    failure = read(text)
    assert failure.sentence() == "RuntimeError: boom, from the prose"


def test_a_console_session_s_prompts_are_input_not_the_exception() -> None:
    text = ("```\n>>> import jax\n>>> jax.jit(f)(x)\n" + TRACEBACK.format(last="TypeError: not an array") + "\n```\n")
    failure = read(text)
    assert failure.exception is not None
    assert failure.exception.type == "TypeError"
    assert failure.source == "block 1"


def test_a_traceback_block_is_preferred_over_a_wrong_value_the_prose_states() -> None:
    text = f"Expected `1` but got `2`.\n\n```\n{TRACEBACK.format(last='KeyError: x')}\n```\n"
    failure = read(text)
    assert failure.exception is not None
    assert failure.wrong_value is None


@pytest.mark.parametrize(("text", "expected", "actual"), [
    ("Expected: 3.0\nGot: 2.0.", "3.0", "2.0"),  # the sentence's full stop is no part of the value
    ("It should be `[1, 2]` but instead `[2, 1]`", "[1, 2]", "[2, 1]"),
    ("The actual output is Array(nan, dtype=float32)", "", "Array(nan, dtype=float32)"),  # no expected value said
    ("Expected output:\n\n```\n6\n```\nActual output:\n\n```\n7\n```\n", "6", "7"),  # each label's own block
])
def test_a_stated_wrong_value_is_read_as_written(text: str, expected: str, actual: str) -> None:
    assert wrong_value(text, code_blocks(text)) == WrongValue(expected, actual)


@pytest.mark.parametrize("text", [
    "I expected `3.0` here.",  # nothing got: no wrong value to look for
    "Got it, thanks for the quick reply!",  # "got" in passing: its words are no value
    "Actual output:\n\nsome words\n\n\n\n```\n7\n```\n",  # the block is too far below the label to be its value
    "Got:\n```python\nimport jax\nprint(1)\n```\n",  # a block of code after the label is the repro, not a value
])
def test_what_is_not_a_stated_value_is_not_made_one(text: str) -> None:
    assert wrong_value(text, code_blocks(text)) is None


def test_the_sentences_name_what_was_found_and_where() -> None:
    assert WrongValue("", "2.0").sentence() == "a wrong value: got '2.0', no expected value quoted"
    found = read("Expected: 3\nGot: 2\n")
    assert found.sentence() == "a wrong value: got '2', expected '3', from the prose"
    assert ReportedFailure().sentence() == "no failure found"
    assert ReportedFailure().exception is None


@pytest.mark.parametrize(("text", "expected", "actual"), [
    # an "expected" label whose own words hold "gives": still the expected value, and the got one is the other
    ("Expected output (what NumPy gives):\n\n```\n[1. 2.]\n```\n\nActual output:\n\n```\n[1. 0.]\n```\n",
     "[1. 2.]", "[1. 0.]"),
    # a parenthesis after the label says what the label is, it is no value
    ("Expected output (same as NumPy):\n```\n3\n```\nGot:\n```\n4\n```\n", "3", "4"),
    # one sentence with both values beats prose such as "returns 0" before it
    ("It returns 0 for me.\n\nThe sum should be `6`, but got `7`.\n", "6", "7"),
])
def test_labels_that_fooled_the_reading_now_read_right(text: str, expected: str, actual: str) -> None:
    assert wrong_value(text, code_blocks(text)) == WrongValue(expected, actual)


def test_a_verb_names_a_value_only_where_one_follows_it() -> None:
    # "as NumPy gives." ends a sentence: the block two lines on is the environment, not the value got
    text = "The first element should be `-1.5`, as NumPy gives.\n\n```\n$ pip freeze\njax==0.5.2\n```\n"
    assert wrong_value(text, code_blocks(text)) is None
    shown = "What it prints here:\n\n```\nTrue\n```\n"
    assert wrong_value(shown, code_blocks(shown)) == WrongValue("", "True")
