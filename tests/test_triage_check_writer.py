"""kit/triage/check_writer.py: the check keeps the block's code as written and adds only the protocol.

The wrong-value wrapper is run here with this interpreter: its blocks print numbers without JAX.
"""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

import pytest

from kit.run.failures import RaisedException
from kit.triage.check_writer import WRONG_VALUE_BAD_IF, check_name, check_text, write_check
from kit.triage.issue_text import code_blocks
from kit.triage.reported_failure import ReportedFailure, WrongValue

BLOCK = code_blocks('```python\n"""A docstring of its own."""\nimport math\n\nprint(math.sqrt(2))\n```')[0]


def test_an_exception_check_is_the_block_verbatim_under_a_docstring(tmp_path: Path) -> None:
    failure = ReportedFailure((RaisedException("TypeError", "bad 'f'"),), source="block 2")
    text = check_text(BLOCK, failure, r"(?m)^(?:[\w.]+\.)?TypeError: bad 'f'", 'From "a.md" """')
    assert text.endswith("\n" + BLOCK.code + "\n")
    tree = ast.parse(text)
    docstring = ast.get_docstring(tree)
    assert docstring is not None
    assert r"bad_if: (?m)^(?:[\w.]+\.)?TypeError: bad 'f'" in docstring
    assert 'From "a.md" """' in docstring  # quotes in the header cannot end the docstring early
    written = write_check(tmp_path / "checks", "a", text, "x")
    assert written.path.read_text() == text


def _run_wrapper(tmp_path: Path, printed: str, expected: str, actual: str) -> subprocess.CompletedProcess[str]:
    block = code_blocks(f"```python\nprint({printed!r})\n```")[0]
    failure = ReportedFailure(wrong_value=WrongValue(expected, actual), source="the prose")
    path = write_check(tmp_path, "w", check_text(block, failure, WRONG_VALUE_BAD_IF, "header"), WRONG_VALUE_BAD_IF).path
    return subprocess.run([sys.executable, str(path)], capture_output=True, text=True, timeout=60)


@pytest.mark.parametrize(("printed", "code"), [
    ("[0.947667   0.9785799  0.33229148]", 1),  # the wrong value, as reported
    ("Array([0.94766703, 0.97857994, 0.3322915 ], dtype=float32)", 1),  # more digits, another repr: still it
    ("[0.9653214  0.31468165 0.63302994]", 0),  # the expected one
    ("[0.1 0.2 0.3]", 125),  # neither: cannot tell
    ("[0.9478 0.9786 0.3323]", 125),  # fewer digits than quoted do not pass as the quoted value
])
def test_the_wrong_value_wrapper_exits_by_which_quoted_value_the_block_printed(
        tmp_path: Path, printed: str, code: int) -> None:
    done = _run_wrapper(tmp_path, printed, "[0.9653214  0.31468165 0.63302994]", "[0.947667   0.9785799  0.33229148]")
    assert done.returncode == code, done.stdout + done.stderr
    assert done.stdout.startswith(printed)  # the block's own output still shows
    assert bool(re.search(WRONG_VALUE_BAD_IF, done.stdout)) == (code == 1)


def test_a_block_that_fails_otherwise_does_not_print_the_wrong_value_line(tmp_path: Path) -> None:
    block = code_blocks("```python\nraise ValueError('another bug')\n```")[0]
    failure = ReportedFailure(wrong_value=WrongValue("1", "2"), source="the prose")
    path = write_check(tmp_path, "w", check_text(block, failure, WRONG_VALUE_BAD_IF, "h"), WRONG_VALUE_BAD_IF).path
    done = subprocess.run([sys.executable, str(path)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 1
    assert "ValueError: another bug" in done.stderr
    assert not re.search(WRONG_VALUE_BAD_IF, done.stdout + done.stderr)  # bad_if leaves it inconclusive


@pytest.mark.parametrize(("source", "name"), [
    ("examples/issues/jit-kwarg-named-f.md", r"jit-kwarg-named-f-[0-9a-f]{6}"),
    ("jax-ml/jax#25329", "issue-jax-ml-jax-25329"),
    ("My Report (copy).txt", r"my-report-copy-[0-9a-f]{6}"),
])
def test_the_checks_name_comes_from_the_report(source: str, name: str) -> None:
    assert re.fullmatch(name, check_name(source))


def test_two_reports_of_one_name_get_two_checks_and_one_report_keeps_its_own() -> None:
    first, second = check_name("issue.md", "/home/a/issue.md"), check_name("issue.md", "/home/b/issue.md")
    assert first != second
    assert first.startswith("issue-")
    assert second.startswith("issue-")
    assert check_name("issue.md", "/home/a/issue.md") == first


def test_a_check_a_triage_did_not_write_is_never_replaced(tmp_path: Path) -> None:
    from kit.errors import UsageError
    from kit.triage.check_writer import WRITTEN_BY

    mine = tmp_path / "qr.py"
    mine.write_text("# my own check\nimport jax\n")
    with pytest.raises(UsageError, match="was not written by a triage: it is left as it is"):
        write_check(tmp_path, "qr", f'"""x, {WRITTEN_BY}."""\n', "")
    assert mine.read_text() == "# my own check\nimport jax\n"
    write_check(tmp_path, "t", f'"""Triage check for a.md, {WRITTEN_BY}."""\n', "")
    assert write_check(tmp_path, "t", f'"""again, {WRITTEN_BY}."""\n', "").path.read_text().startswith('"""again')
