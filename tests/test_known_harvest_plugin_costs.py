"""What the harvest's pytest plugin leaves out to save time, and that what it keeps is what it kept before: a test
function's cases after its first failure are not run, nor an entry's tests once one shows it present, and frames
whose source no kept line depends on are not read."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from kit.install import Environment
from kit.known.harvest import select_plugin
from kit.known.harvest.changed_tests import TestFunction
from kit.known.harvest.pytest_run import FAILED, PASSED, SKIPPED, TestOutcome, run_side

CASES = '''
import functools
import pathlib
import unittest


def _case(n):
    def test_param(self):
        pathlib.Path(f"ran-{n}").write_text("")
        raise AssertionError(f"case {n} fails")
    @functools.wraps(test_param)
    def case(self):
        return test_param(self)
    case.__name__ = f"test_param{n}"
    return case


class CasesTest(unittest.TestCase):
    test_param0 = _case(0)
    test_param1 = _case(1)
    test_param2 = _case(2)
'''


def test_a_functions_cases_after_its_first_failure_are_not_run_and_its_outcome_is_that_failure(tmp_path: Path) -> None:
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "cases_test.py").write_text(CASES)
    ran = run_side(Environment(Path(sys.executable), {}, "existing"), tmp_path,
                   [TestFunction("tests/cases_test.py", "CasesTest", "test_param")])
    outcome = ran.outcomes["tests/cases_test.py::CasesTest::test_param"]
    assert outcome == TestOutcome(FAILED, 3, outcome.message) and "case 0 fails" in outcome.message
    assert sorted(p.name for p in tmp_path.glob("ran-*")) == ["ran-0"]  # cases 1 and 2 skipped unrun
    assert set(ran.file_seconds) == {"tests/cases_test.py"}


def _inner(values: list[int]) -> int:
    if values:
        raise ValueError(f"bad {len(values)}")
    return 0


def _outer() -> int:
    return _inner([1,
                   2])


def _chained() -> int:
    try:
        return _outer()
    except ValueError as error:
        raise RuntimeError("while chaining") from error


def _kept(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith("E ")]


@pytest.mark.parametrize("style", ["long", "short"])
@pytest.mark.parametrize("raising", [_outer, _chained])
def test_frames_shown_without_source_keep_every_line_the_kit_keeps(style: str, raising: object,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    from _pytest._code import code

    try:
        raising()  # type: ignore[operator]
    except (ValueError, RuntimeError):
        info = code.ExceptionInfo.from_current()
    before = str(info.getrepr(style=style))
    formatter = getattr(code, "ExceptionInfoFormatter", None) or getattr(code, "FormattedExcinfo")
    for name in ("repr_traceback_entry", "_getentrysource"):  # undone after the test
        monkeypatch.setattr(formatter, name, getattr(formatter, name))
    select_plugin._read_source_only_for_messages()
    after = str(info.getrepr(style=style))
    assert _kept(after) == _kept(before) and _kept(after)
    assert after.splitlines()[-1] == before.splitlines()[-1]
    assert "return _inner([1," in before and "return _inner([1," not in after  # a frame before the last: not read
    if style != "short":
        assert 'raise ValueError(f"bad {len(values)}")' in after  # the last frame's source sets the E lines' indent


ENTRY = '''
import pathlib


def test_first():
    raise ValueError("the bug")


def test_second():
    pathlib.Path("ran-second").write_text("")


def test_third():
    pathlib.Path("ran-third").write_text("")
'''


def test_an_entrys_tests_stop_once_one_fails_as_at_the_parent_unless_another_entry_still_needs_them(
        tmp_path: Path) -> None:
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "entry_test.py").write_text(ENTRY)
    first, second, third = (TestFunction("tests/entry_test.py", "", name)
                            for name in ("test_first", "test_second", "test_third"))
    entries = [[(first, "E   ValueError: the bug"), (second, "E   AssertionError")],  # present through test_first
               [(first, "E   TypeError: another bug"), (third, "E   AssertionError")]]  # not present: third runs
    ran = run_side(Environment(Path(sys.executable), {}, "existing"), tmp_path, [first, second, third],
                   entries=entries)
    assert ran.outcomes[second.node_id] == TestOutcome(SKIPPED, 1, "Skipped: " + select_plugin.ENTRY_PRESENT)
    assert ran.outcomes[third.node_id].outcome == PASSED
    assert sorted(p.name for p in tmp_path.glob("ran-*")) == ["ran-third"]
