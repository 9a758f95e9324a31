"""kit/triage/reported_versions.py: which release the reporter ran, and what the report says of others.

tests/test_triage_report_reading.py reads the example reports and one sentence of each kind; here are the
orders of trust between the sources, the roles the prose can give a release, and what is not read as one.
"""

from __future__ import annotations

import pytest

from kit.triage.issue_text import code_blocks
from kit.triage.reported_versions import Versions, reported_versions


def read(text: str) -> Versions:
    return reported_versions(text, code_blocks(text))


def test_environment_info_outranks_a_pip_list_that_comes_first() -> None:
    # Trust goes by source, not by position: print_environment_info() says what ran, a pip list may be another env.
    text = "```\njax        0.4.30\nnumpy      1.26.4\n```\n\n```\njax:    0.4.36\njaxlib: 0.4.36\nnumpy:  2.1.3\n```\n"
    versions = read(text)
    assert versions.reported == "0.4.36"
    assert versions.notes[0] == "ran 0.4.36 (jax.print_environment_info() output)"


def test_what_the_blocks_say_outranks_the_prose() -> None:
    versions = read("I am on jax 0.4.20 I think.\n\n```\njax==0.4.31\n```\n")
    assert versions.reported == "0.4.31"
    assert versions.notes == ("ran 0.4.31 (a pip freeze line)",)


def test_a_version_inside_a_code_block_is_not_read_as_prose() -> None:
    # "jax 0.3.0" in the repro's comment is code, not the reporter's words: it names no release they ran.
    assert read("```python\n# see jax 0.3.0 docs\nimport jax\n```\nIt fails.").reported == ""


@pytest.mark.parametrize(("text", "good", "bad"), [
    ("This regressed in v0.5.1.", "", "0.5.1"),  # a leading v is no part of the release
    ("It fails after updating to jax 0.5.2.", "", "0.5.2"),
    ("As of jax version 0.4.38 this raises.", "", "0.4.38"),
    ("It was fine on 0.4.30 and broke in 0.4.31.", "0.4.30", "0.4.31"),
    # An upgrade's two ends decide both: a later "since" must not move the first bad release.
    ("After upgrading from 0.4.30 to 0.4.31 it fails; since 0.4.33 it also warns.", "0.4.30", "0.4.31"),
])
def test_the_prose_gives_each_release_its_role(text: str, good: str, bad: str) -> None:
    versions = read(text)
    assert (versions.last_good, versions.first_bad) == (good, bad)
    assert versions.reported == bad  # with nothing else said, the reporter ran the release it broke in


def test_a_release_that_worked_far_from_the_word_is_not_taken_for_a_good_one() -> None:
    # "works" and the release are more than 40 characters apart: another clause, not the release that worked.
    versions = read("The old workaround works, but after a long day of trying other things on jax 0.4.35 it fails.")
    assert versions.last_good == ""
    assert versions.reported == "0.4.35"


def test_a_release_candidate_names_its_release_and_says_what_it_is() -> None:
    versions = read("```\njax==0.5.0rc1\n```\n")
    assert versions.reported == "0.5.0"
    assert "0.5.0rc1 is a development build or a candidate before 0.5.0" in versions.notes


def test_a_four_part_version_is_read_whole() -> None:
    assert read("```\njax==0.4.13.1\n```\n").reported == "0.4.13.1"


def test_nothing_said_is_an_empty_answer() -> None:
    assert read("It is slow on my GPU.") == Versions()


def test_the_same_script_printing_the_same_on_a_release_is_a_release_that_worked() -> None:
    text = "It prints the wrong row.\nWith jax/jaxlib 0.5.3 the same script\nprints the same row three times.\n"
    assert reported_versions(text, code_blocks(text)).last_good == "0.5.3"
