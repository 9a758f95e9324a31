"""Where a report's text comes from: a file the user saved, or a GitHub issue read through GitHub's API.

``--issue OWNER/REPO#N`` reads the issue's title and body (its markdown, as the
reporter wrote it) from ``api.github.com`` with `kit.http`, anonymously. A
network that cannot reach GitHub is exit 4 with one sentence and the way
round it (save the issue's text as a file); it says nothing about the issue.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Mapping

from .. import http
from ..errors import KitError, UsageError
from ..exit_codes import EXIT_NETWORK
from ..user_paths import shown_path

GITHUB_API = "https://api.github.com"
_REFERENCE = re.compile(r"^(?P<owner>[A-Za-z0-9][A-Za-z0-9-]*)/(?P<repo>[A-Za-z0-9._-]+)#(?P<number>\d+)$")

Get = Callable[..., http.Response]


class IssueUnreachable(KitError):
    """GitHub could not be reached to read an issue: nothing is known about it (exit 4, as an unreachable index)."""

    exit_code = EXIT_NETWORK


@dataclass(frozen=True)
class IssueText:
    source: str
    """What the report is called in what the kit prints: a path relative to the project, or ``OWNER/REPO#N``."""
    text: str


def read_file(path: Path, root: Path) -> IssueText:
    """A report saved as markdown or text; UsageError when it cannot be read."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError as error:
        raise UsageError(f"the report {path} cannot be read ({error.strerror or error})",
                         "give the file a bug report was saved to (markdown or text)") from None
    return IssueText(shown_path(str(path.resolve()), root), text)


ISSUE_TIMEOUT_S = 15.0
"""How long GitHub's API may take to give one issue (it answers in well under a second): behind a silent proxy the
read waited the 60 s meant for the index's large pages."""


def read_github_issue(reference: str, get: Get | None = None) -> IssueText:
    """``OWNER/REPO#N``'s title and body from GitHub's API; `IssueUnreachable` or `UsageError` when it cannot."""
    named = _REFERENCE.match(reference.strip())
    if not named:
        raise UsageError(f"--issue {reference!r} is not OWNER/REPO#N", "e.g. --issue jax-ml/jax#25329")
    url = f"{GITHUB_API}/repos/{named['owner']}/{named['repo']}/issues/{named['number']}"
    save_it = (f"open https://github.com/{named['owner']}/{named['repo']}/issues/{named['number']}, save its text "
               "as a file (e.g. issue.md) and run nox -s triage -- issue.md")
    try:
        response = (get or http.get)(url, {"Accept": "application/vnd.github+json", "User-Agent": "jax-bisect-kit"},
                                     timeout=ISSUE_TIMEOUT_S)
    except http.Unreachable as error:
        raise IssueUnreachable(f"GitHub's API could not be reached to read {reference} ({error.reason})",
                               save_it) from None
    except http.HttpError as error:
        if error.status == 404:
            raise UsageError(f"GitHub has no issue {reference} (HTTP 404)", "check the owner, repository and number")
        raise IssueUnreachable(f"GitHub's API did not give {reference} (HTTP {error.status}, {error.reason})",
                               save_it) from None
    issue = _issue_json(response.body, reference)
    title, body = str(issue.get("title") or ""), str(issue.get("body") or "")
    return IssueText(reference.strip(), f"# {title}\n\n{body}\n")


def _issue_json(body: bytes, reference: str) -> Mapping[str, object]:
    try:
        issue = json.loads(body.decode("utf-8", "replace"))
    except ValueError:
        issue = None
    if not isinstance(issue, dict):
        raise IssueUnreachable(f"GitHub's API answered for {reference} with something other than an issue",
                               "save the issue's text as a file and run nox -s triage -- FILE")
    return issue
