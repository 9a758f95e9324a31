"""kit/run/bounded_match.py: a ``bad_if`` search in a child interpreter, stopped at its limit, never a hang."""

from __future__ import annotations

import pytest

import re
import time

from kit.run.bounded_match import Searched, bounded_search


def test_a_match_returns_the_matched_text() -> None:
    assert bounded_search(re.compile(r"Error: \w+"), "line\nValueError: boom\n") == Searched("Error: boom")


def test_no_match_is_none_without_a_reason() -> None:
    # Guards against confusing "no match" with "gave up": only the latter may carry a sentence.
    assert bounded_search(re.compile("segfault"), "all fine") == Searched(None, "")


def test_the_pattern_flags_travel_to_the_child() -> None:
    # The child compiles from pattern text: losing the flags would make (?i)-less IGNORECASE patterns miss.
    assert bounded_search(re.compile("segfault", re.IGNORECASE), "SegFault at 0x0").matched == "SegFault"
    assert bounded_search(re.compile("^b$", re.MULTILINE), "a\nb\nc").matched == "b"


def test_an_empty_match_is_a_match_not_a_miss() -> None:
    # "" is falsy: a truthiness test on the found text would turn this match into a miss.
    assert bounded_search(re.compile("x*"), "abc") == Searched("")


def test_text_outside_ascii_and_with_control_characters_arrives_intact() -> None:
    text = "naïve ✓ \x00\ttab \udcff end"
    assert bounded_search(re.compile("✓ .*tab"), text).matched == "✓ \x00\ttab"


@pytest.mark.real_time  # waits out a real time limit
def test_a_runaway_pattern_gives_up_at_the_limit_and_says_why() -> None:
    started = time.monotonic()
    found = bounded_search(re.compile(r"(a+)+$"), "a" * 4000 + "b", limit_s=0.5)
    assert time.monotonic() - started < 5
    assert found.matched is None
    assert found.gave_up.startswith("matching bad_if '(a+)+$' against the output did not finish within 0.5 s")


def test_a_pattern_the_child_cannot_run_is_a_reason_not_an_exception() -> None:
    # The child exits non-zero (here: LOCALE with a str pattern); its last stderr line is the reason.
    broken = type("Pattern", (), {"pattern": "x", "flags": re.LOCALE})()
    found = bounded_search(broken, "x")  # type: ignore[arg-type]
    assert found.matched is None
    assert found.gave_up.startswith("matching bad_if 'x' failed (ValueError: ")
    assert "LOCALE" in found.gave_up
    assert found.gave_up.endswith(")")
