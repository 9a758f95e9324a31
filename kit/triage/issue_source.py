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
from typing import Mapping, Protocol

from .. import http
from ..errors import KitError, UsageError
from ..exit_codes import EXIT_NETWORK
from ..user_paths import file_problem, report_path

GITHUB_API = "https://api.github.com"
_REFERENCE = re.compile(r"^(?P<owner>[A-Za-z0-9][A-Za-z0-9-]*)/(?P<repo>[A-Za-z0-9._-]+)#(?P<number>\d+)$")

class Get(Protocol):
    """How the issue is fetched: `kit.http.get`'s signature (tests hand in a stand-in)."""

    def __call__(self, url: str, headers: Mapping[str, str] | None = None,
                 timeout: float = http.DEFAULT_TIMEOUT_S) -> http.Response: ...


class IssueUnreachable(KitError):
    """GitHub could not be reached to read an issue: nothing is known about it (exit 4, as an unreachable index)."""

    exit_code = EXIT_NETWORK


@dataclass(frozen=True)
class IssueText:
    source: str
    """What the report is called in what the kit prints: a path relative to the project (``../x.md`` outside it: no
    machine's absolute path is printed or written into a check), or ``OWNER/REPO#N``."""
    text: str
    key: str = ""
    """What tells this report from another of the same name: the file's whole path, or ``OWNER/REPO#N``
    (never printed; it keys the check's file name, kit/triage/check_writer.check_name)."""


def issue_page(reference: str) -> str:
    """The issue's page on GitHub, for a reader (``OWNER/REPO#N`` as given when it is not one)."""
    named = _REFERENCE.match(reference.strip())
    return f"https://github.com/{named['owner']}/{named['repo']}/issues/{named['number']}" if named else reference


MAX_REPORT_BYTES = 2**20
"""A bug report is text a person wrote (GitHub caps an issue's body at 65,536 characters): larger is not one."""

_REPORT_TIP = "give the file a bug report was saved to (markdown or text)"


def read_file(path: Path, root: Path) -> IssueText:
    """A report saved as markdown or text; UsageError when it cannot be read.

    The file's type and size are looked at before it is opened, as the record readers do
    (kit/records/json_text.py): a named pipe would wait forever, ``/dev/zero`` never ends.
    """
    problem = file_problem(path)
    if problem:
        raise UsageError(f"the report {path} {problem}", _REPORT_TIP)
    try:
        with open(path, "rb") as opened:
            data = opened.read(MAX_REPORT_BYTES + 1)
    except OSError as error:
        raise UsageError(f"the report {path} cannot be read ({error.strerror or error})", _REPORT_TIP) from None
    if len(data) > MAX_REPORT_BYTES:
        raise UsageError(f"the report {path} is larger than {MAX_REPORT_BYTES} bytes: not a bug report's text",
                         _REPORT_TIP)
    return IssueText(report_path(path.resolve(), root), data.decode("utf-8", errors="replace"),
                     key=str(path.resolve()))


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
    return IssueText(reference.strip(), f"# {title}\n\n{body}\n", key=reference.strip())


def _issue_json(body: bytes, reference: str) -> Mapping[str, object]:
    try:
        issue = json.loads(body.decode("utf-8", "replace"))
    except ValueError:
        issue = None
    if not isinstance(issue, dict):
        raise IssueUnreachable(f"GitHub's API answered for {reference} with something other than an issue",
                               "save the issue's text as a file and run nox -s triage -- FILE")
    return issue
