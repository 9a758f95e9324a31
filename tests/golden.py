"""Golden files: a user-facing text compared whole with ``tests/golden/NAME``, so its wording is pinned in one place.

``assert_golden(name, text)`` first replaces what differs from run to run and from
machine to machine (`normalise`), and only that, so a reworded sentence still fails
the comparison and shows as a diff. A golden file that is missing is written and the
test fails, saying so: a new golden can never pass before someone has read it. After a
change that is meant, ``python3 -m pytest tests/test_golden_wording.py --update-golden``
writes every golden again (and fails each test, to say it did); read the diff, commit
it. CI never passes that option. The option reaches this module through `set_update`,
which tests/conftest.py calls once per session.
"""

from __future__ import annotations

import difflib
import os
import re
import socket
import tempfile
from pathlib import Path
from typing import List, Tuple

import pytest

GOLDEN = Path(__file__).resolve().parent / "golden"
CHECKOUT = Path(__file__).resolve().parent.parent
"""This checkout: where it lives is the machine's business, never the report's wording."""

_update = False


def set_update(update: bool) -> None:
    """Whether `assert_golden` writes its files instead of comparing (pytest's ``--update-golden``)."""
    global _update
    _update = update


def assert_golden(name: str, text: str) -> None:
    """Fail unless ``text``, normalised, is tests/golden/NAME byte for byte (UTF-8); write it when asked or missing."""
    path = GOLDEN / name
    actual = normalise(text)
    if _update or not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(actual.encode("utf-8"))  # bytes: no newline translation, on any platform
        why = "--update-golden was given" if _update else "there was none"
        pytest.fail(f"wrote {_shown(path)} ({why}): read it, commit it, run the test again",
                    pytrace=False)
    expected = path.read_bytes().decode("utf-8")
    if actual != expected:
        diff = difflib.unified_diff(expected.splitlines(keepends=True), actual.splitlines(keepends=True),
                                    f"{_shown(path)} (golden)", "this run (normalised)")
        pytest.fail("".join(diff) + "\nthe text differs from its golden file; if the change is meant, run "
                    f"`python3 -m pytest {_test_module()} --update-golden` and commit the golden file",
                    pytrace=False)


def normalise(text: str) -> str:
    """``text`` with what varies between runs and machines replaced by a ``<placeholder>``; nothing else changed.

    There is no rule for the version of the Python running the tests: none of these texts shows it (the fake
    machine names Python 3.11 whichever runs the tests), and one would rewrite the fixture records' 3.11.9 and
    3.12.3 on a machine that runs one of those. Add a rule only for what a text shows and a rerun changes.
    """
    text = _temporary(_checkout(text))  # paths first: a path holds names the patterns below would also match
    for pattern, placeholder in _PATTERNS:
        text = pattern.sub(placeholder, text)
    return _host(text)


def _shown(path: Path) -> str:
    """A golden file's path as the messages name it: relative to the checkout."""
    return os.path.relpath(path, CHECKOUT)


def _test_module() -> str:
    """The test module running now, to name in the failure message (the golden tests' module when unknown)."""
    current = os.environ.get("PYTEST_CURRENT_TEST", "tests/test_golden_wording.py::")
    return current.split("::", 1)[0]


# -- the rules, in the order `normalise` applies them


def _checkout(text: str) -> str:
    """The checkout as a report can spell it: absolute, under ``~/``, or relative from a project elsewhere
    (``../../work/jax-kit``, `kit.user_paths.report_path`): the ``../`` climb and the part of the path below the
    two folders' common ancestor both depend on where each lives."""
    parts = CHECKOUT.parts[1:]
    tails = "|".join(re.escape("/".join(parts[i:])) for i in range(len(parts)))
    spellings = [re.escape(str(CHECKOUT)) + r"(?![\w.-])", rf"(?:\.\./)+(?:{tails})(?![\w.-])"]
    home = Path.home()
    if home in CHECKOUT.parents:
        spellings.insert(0, re.escape("~/" + CHECKOUT.relative_to(home).as_posix()) + r"(?![\w.-])")
    return re.sub("|".join(spellings), "<checkout>", text)


def _temporary(text: str) -> str:
    """pytest's folder for this test (``/tmp/pytest-of-USER/pytest-7/test_name0``, with pytest-xdist's
    ``popen-gw1/`` between under ``-n``), then the system's temp folder itself (``/tmp``); a name below it that
    the kit picks at random would still show, and fail loudly."""
    roots = sorted({tempfile.gettempdir(), os.path.realpath(tempfile.gettempdir())}, key=len, reverse=True)
    root = "|".join(re.escape(r) for r in roots)
    text = re.sub(rf"(?:{root})/pytest-of-[^/\s]+/pytest-\d+/(?:popen-gw\d+/)?[^/\s`'\")]+", "<tmp>", text)
    return re.sub(rf"(?:{root})(?=/)", "<tmp>", text)


_DIGEST = re.compile(r"(probes/[0-9a-f]{16}/)[0-9a-f]{24}(?![0-9a-f])")
"""A probe file's name: its identity's digest, which holds this machine's CPU model (`kit.records.Identity`);
the folder above it (what was asked: the check, the release, the backend) stays."""

_PORT = re.compile(r"(?<=127\.0\.0\.1:)\d+")
"""The port a local index serves on: a free one, each run its own."""

_DATETIME = re.compile(r"\b\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?(?![\w:])")
"""An ISO date and time: when a run happened (a lock's "resolved 2026-12-01T15:45:50Z", a probe's, a record's).
A bare date stays: it is data (a release's upload date, an era cut-off), the same on every run."""

_SECONDS = re.compile(r"(?<![\w.])\d+(?:\.\d+)? s\b")
"""A wall time or duration as the kit writes them: ``12.3 s``, ``(0.4 s of probes)``, ``0 s``."""

_PATTERNS: List[Tuple[re.Pattern[str], str]] = [
    (_DIGEST, r"\1<identity>"), (_PORT, "<port>"), (_DATETIME, "<time>"), (_SECONDS, "<n> s")]


def _host(text: str) -> str:
    """This machine's host name, as a whole word (records and the matrix name the host a run was on)."""
    names = {socket.gethostname(), socket.gethostname().split(".", 1)[0]} - {""}
    for name in sorted(names, key=len, reverse=True):
        text = re.sub(rf"(?<![\w.-]){re.escape(name)}(?![\w-])", "<host>", text)
    return text
