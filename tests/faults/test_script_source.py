"""A check script that is not Python source text: inconclusive, as one that does not compile, never affected.

A binary or non-UTF-8 script made Python exit 1 with a SyntaxError printed
without a traceback (``Non-UTF-8 code starting with '\\xff' ...``), and the
exit read as affected. docs/faults.md, "Untrusted input and the kit's folders".
"""

from __future__ import annotations

from pathlib import Path

import pytest

from kit.run import runner
from kit.run.failures import source_problem
from tests.faults.script_checks import prepared_here, script_matrix

CASES = {
    "an ELF header": (b"\x7fELF\x02\x01\x01\x00\x00\x00", "byte 7 is a NUL byte: a binary file?"),
    "Latin-1 without a declaration": (b"print('\xe9t\xe9')\nraise SystemExit(1)\n",
                                      "invalid or missing encoding declaration"),
    "bytes its declared encoding cannot decode": (b"# -*- coding: ascii -*-\nprint('\xe9')\n",
                                                  "byte 31 is not ascii, and no other encoding is declared"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_script_that_is_not_python_source_is_inconclusive(tmp_path: Path, case: str) -> None:
    body, words = CASES[case]
    script = tmp_path / "hostile.py"
    script.write_bytes(body)
    record, _path = runner.run_check(script_matrix(tmp_path, script), runner.RunRequest("hostile", "0.6.0"),
                                     lambda line: None, prepared=prepared_here(tmp_path))
    assert (record["status"], record["verdict"]) == ("ran", "inconclusive"), record["reason"]
    assert record["reason"] == f"the script does not compile: it is not Python source text ({words})"


def test_source_text_in_a_declared_encoding_is_source() -> None:
    assert source_problem(Path(__file__)) is None
