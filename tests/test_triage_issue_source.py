"""kit/triage/issue_source.py: ``--issue OWNER/REPO#N`` through GitHub's API, and what it says when it cannot."""

from __future__ import annotations

import json
from typing import Any

import pytest

from kit import http
from kit.errors import UsageError
from kit.exit_codes import EXIT_NETWORK
from kit.triage.issue_source import IssueUnreachable, read_github_issue


def test_the_issue_title_and_body_are_the_report() -> None:
    asked: list[str] = []

    def get(url: str, headers: Any = None, **_: Any) -> http.Response:
        asked.append(url)
        return http.Response(200, json.dumps({"title": "jit fails", "body": "```python\nimport jax\n```"}).encode())

    issue = read_github_issue("jax-ml/jax#25329", get)
    assert asked == ["https://api.github.com/repos/jax-ml/jax/issues/25329"]
    assert issue.source == "jax-ml/jax#25329"
    assert issue.text == "# jit fails\n\n```python\nimport jax\n```\n"


def test_github_out_of_reach_is_exit_4_with_the_way_round_it() -> None:
    def get(url: str, *args: Any, **kwargs: Any) -> http.Response:
        raise http.Unreachable(url, "Connection refused")

    with pytest.raises(IssueUnreachable) as stopped:
        read_github_issue("jax-ml/jax#25329", get)
    assert stopped.value.exit_code == EXIT_NETWORK
    assert str(stopped.value) == "GitHub's API could not be reached to read jax-ml/jax#25329 (Connection refused)"
    assert stopped.value.tip == ("open https://github.com/jax-ml/jax/issues/25329, save its text as a file (e.g. "
                                 "issue.md) and run nox -s triage -- issue.md")


@pytest.mark.parametrize(("status", "error"), [(404, UsageError), (403, IssueUnreachable)])
def test_an_error_status_is_said(status: int, error: type) -> None:
    def get(url: str, *args: Any, **kwargs: Any) -> http.Response:
        raise http.HttpError(url, status, "rate limited" if status == 403 else "Not Found")

    with pytest.raises(error):
        read_github_issue("jax-ml/jax#1", get)


@pytest.mark.parametrize("reference", ["jax-ml/jax", "25329", "jax-ml/jax#x", "https://github.com/jax-ml/jax/issues/1"])
def test_a_reference_that_is_not_owner_repo_number_is_refused(reference: str) -> None:
    with pytest.raises(UsageError, match="is not OWNER/REPO#N"):
        read_github_issue(reference, lambda *a, **k: pytest.fail("nothing is asked"))  # type: ignore[arg-type, return-value]
