"""A reproduce line pastes into a shell as the command that was run: every word quoted, no path of this machine's.

The faults: ``python -m kit explain`` wrote the program's arguments as they
came, so pasting its line ran a ``$(...)`` among them; explain's report turned
each backtick of the line into a quote (another command); and a bisect report
named a clone outside the project and the home folder ``--jax-repo
../../../<where this machine keeps it>``, a path climbing out of the project
that means nothing to the reader. Now `kit.reproduce_line` makes every such
line: quoted, a path inside the project relative, under home ``~/...`` (the
``~`` unquoted), elsewhere a placeholder named for its option
(``<JAX_REPO>``); a path the user gave relative is kept as given.
docs/faults.md, "Untrusted input and the kit's folders".
"""

from __future__ import annotations

import dataclasses
import json
import shlex
import sys
from pathlib import Path

import pytest

from kit import explain
from kit.config import load_matrix
from kit.explain import capture as capture_module
from kit.install.environment import Environment, Prepared

ROOT = Path(__file__).resolve().parents[2]


def test_explains_line_quotes_the_programs_arguments(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    matrix = dataclasses.replace(load_matrix(ROOT / "matrix.toml"), results_dir=tmp_path / "reports" / "results")
    (tmp_path / "plain.py").write_text("print('no jax here')\n")
    monkeypatch.setattr(capture_module.runner, "prepare", lambda matrix, request, log: Prepared(
        plan=None, resolution=None, jax="0.6.0",
        environment=Environment(python=Path(sys.executable), versions={}, obtained="reused")))
    argv = ["--called-from", str(tmp_path), "plain.py", "--releases", "0.6.0", "--", "$(touch pwned)", "a`b`"]
    assert explain.main(matrix, argv, log=lambda _: None) == 1  # compiled nothing: a record all the same
    capsys.readouterr()
    record = json.loads(next((tmp_path / "reports").rglob("explain-*.json")).read_text())
    line = next(c["reproduce"] for c in record["releases"]) if "releases" in record else record["reproduce"]
    assert shlex.split(line)[-2:] == ["$(touch pwned)", "a`b`"]  # was: $(touch pwned) bare, run when pasted
    assert line == "python -m kit explain plain.py --releases 0.6.0 -- '$(touch pwned)' 'a`b`'"  # no --called-from
    markdown = next((tmp_path / "reports").rglob("explain-*.md")).read_text()
    assert f"\n{line}\n" in markdown  # was: a`b` written a'b' to fit the fence
