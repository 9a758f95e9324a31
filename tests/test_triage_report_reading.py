"""kit/triage/report_reading.py (with reported_failure.py and reported_versions.py): the three example reports
read as a triager would, without running anything, and the statements the readers must tell apart."""

from __future__ import annotations

from pathlib import Path

import pytest

from kit.triage.issue_text import code_blocks
from kit.triage.report_reading import read_report
from kit.triage.reported_failure import reported_failure
from kit.triage.reported_versions import reported_versions

ISSUES = Path(__file__).resolve().parent.parent / "examples" / "issues"


def _read(name: str):  # type: ignore[no-untyped-def]
    return read_report((ISSUES / name).read_text())


def test_an_exception_report_gives_its_block_its_exception_and_the_upgrade() -> None:
    reading = _read("shapedtypestruct-immutable.md")
    assert reading.choice.block.number == 1
    assert reading.choice.block.first_line() == "import jax"
    assert reading.failure.exception is not None
    assert reading.failure.source == "block 2"
    assert reading.failure.exception.headline() == ("RuntimeError: Cannot reassign attributes (shape) of immutable "
                                                   "ShapeDtypeStruct objects")
    assert reading.bad_if == (r"(?m)^(?:[\w.]+\.)?RuntimeError: Cannot reassign attributes \(shape\) of immutable "
                              "ShapeDtypeStruct objects")
    assert (reading.versions.reported, reading.versions.last_good, reading.versions.first_bad) == ("0.6.1", "0.6.0", "0.6.1")


def test_a_wrong_value_report_gives_both_values_and_the_pip_list_release() -> None:
    reading = _read("random-uniform-values.md")
    wrong = reading.failure.wrong_value
    assert wrong is not None
    assert reading.failure.exception is None
    assert (wrong.expected, wrong.actual) == ("[0.9653214  0.31468165 0.63302994]", "[0.947667   0.9785799  0.33229148]")
    assert reading.bad_if == "(?m)^REPORTED WRONG VALUE:"
    assert (reading.versions.reported, reading.versions.last_good) == ("0.5.0", "0.4.36")
    assert reading.versions.notes[0] == "ran 0.5.0 (a pip list line)"


def test_an_environment_info_report_names_its_release_from_that_output() -> None:
    reading = _read("jit-kwarg-named-f.md")
    assert reading.choice.block.number == 1  # block 3 is `jax.print_environment_info()`, not the repro
    assert reading.versions.reported == "0.4.36"
    assert reading.versions.last_good == "0.4.35"
    assert reading.versions.notes[0] == "ran 0.4.36 (jax.print_environment_info() output)"
    assert reading.failure.exception is not None
    assert reading.failure.exception.type == "TypeError"


@pytest.mark.parametrize(("text", "reported", "good", "bad"), [
    ("It broke after upgrading from jax 0.4.30 to 0.4.31.", "0.4.31", "0.4.30", "0.4.31"),
    ("This is broken since 0.4.36; jax 0.4.38 still fails.", "0.4.36", "", "0.4.36"),
    ("Works fine with jax 0.4.35 but fails on jax 0.4.36.", "0.4.36", "0.4.35", ""),  # not the one that worked
    ("```\n>>> jax.__version__\n'0.5.2'\n```\nIt worked on 0.5.0.", "0.5.2", "0.5.0", ""),
    ("```\njax==0.6.0\njaxlib==0.6.0\n```", "0.6.0", "", ""),
    ("Using jax 0.4.36.dev20241122 from nightly.", "0.4.36", "", ""),
    ("No versions here, only jaxlib wheels.", "", "", ""),
])
def test_versions_are_read_from_what_the_text_says(text: str, reported: str, good: str, bad: str) -> None:
    versions = reported_versions(text, code_blocks(text))
    assert (versions.reported, versions.last_good, versions.first_bad) == (reported, good, bad)


def test_a_development_build_is_named_as_one() -> None:
    text = "Using jax 0.4.36.dev20241122 from nightly."
    assert any("development build" in note for note in reported_versions(text, code_blocks(text)).notes)


def test_a_heading_that_says_returns_quotes_no_value_and_the_block_after_a_label_is_the_value() -> None:
    text = ("# sum returns the wrong value in 0.5.0\n\n```python\nimport jax\nprint(jax.numpy.ones(3).sum())\n```\n"
            "I expected `3.0` but got:\n\n```\n2.0\n```\n")
    failure = reported_failure(text, code_blocks(text))
    assert failure.wrong_value is not None
    assert (failure.wrong_value.expected, failure.wrong_value.actual) == ("3.0", "2.0")


def test_a_chained_traceback_in_the_report_keeps_every_link() -> None:
    text = ("```\nTraceback (most recent call last):\n  File \"a.py\", line 3, in gen\nStopIteration\n\n"
            "The above exception was the direct cause of the following exception:\n\n"
            "Traceback (most recent call last):\n  File \"a.py\", line 9, in <module>\n"
            "RuntimeError: generator raised StopIteration\n```\n")
    failure = reported_failure(text, code_blocks(text))
    assert [link.name for link in failure.chain] == ["StopIteration", "RuntimeError"]
    assert failure.sentence() == ("RuntimeError: generator raised StopIteration (raised from StopIteration), "
                                  "from block 1")


def test_a_report_without_a_failure_says_so() -> None:
    text = "```python\nimport jax\nprint(jax.numpy.ones(2))\n```\nIt is slow."
    reading = read_report(text)
    assert reading.bad_if == ""
    assert reading.failure.sentence() == "no failure found"
    assert "reported failure: no failure found" in reading.lines()


def test_a_block_with_an_assert_and_no_traceback_reports_the_assertion() -> None:
    text = "The assert fails on 0.5.0:\n```python\nimport jax\nassert jax.numpy.ones(2).sum() == 3\n```\n"
    reading = read_report(text)
    assert reading.failure.sentence() == "AssertionError, from the assert in block 1"
    assert reading.bad_if == r"(?m)^(?:[\w.]+\.)?AssertionError(?::|$)"
