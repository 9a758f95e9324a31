"""The commit phase's verdict: one word per answer, one table of how each is said, the words reports always held."""

from __future__ import annotations

import json

from kit.bisect.commits import CommitVerdict


def test_the_words_are_the_ones_reports_already_hold() -> None:
    # A report's JSON `commits.verdict` written before the enum existed reads back as a member, and one written now
    # holds the same word.
    written_before = ["commit", "short-list", "not-in-python", "commit-with-newer-jaxlib", "binary-may-be-the-cause",
                      "build-matters", "stopped"]
    assert sorted(CommitVerdict(word) for word in written_before) == sorted(CommitVerdict)
    assert json.loads(json.dumps({"verdict": CommitVerdict.BUILD_MATTERS})) == {"verdict": "build-matters"}
    assert f"{CommitVerdict.SHORT_LIST}" == "short-list"


def test_every_verdict_is_said_in_the_report_and_in_the_summary() -> None:
    assert all(verdict.answer and verdict.short for verdict in CommitVerdict)
    assert CommitVerdict.COMMIT.answer == "the commit" and CommitVerdict.COMMIT.short == "exact"


def test_which_verdicts_name_a_commit_and_which_turn_on_the_build() -> None:
    assert {v for v in CommitVerdict if v.exact} == {CommitVerdict.COMMIT, CommitVerdict.COMMIT_WITH_NEWER_JAXLIB}
    assert {v for v in CommitVerdict if v.names_commits} == {CommitVerdict.COMMIT, CommitVerdict.COMMIT_WITH_NEWER_JAXLIB,
                                                             CommitVerdict.SHORT_LIST}
    assert {v for v in CommitVerdict if v.about_the_build} == {
        CommitVerdict.NOT_IN_PYTHON, CommitVerdict.BINARY_MAY_BE_THE_CAUSE, CommitVerdict.BUILD_MATTERS}
