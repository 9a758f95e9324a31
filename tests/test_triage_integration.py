"""``nox -s triage -- examples/issues/shapedtypestruct-immutable.md --run`` for real: the check written from the
report runs on jax 0.6.1 (the reporter's), a newer release and (the two behaving the same) 0.6.0, where the report
says it worked, and the bisect it hands over names 0.6.0 -> 0.6.1;
with ``KIT_JAX_REPO`` naming a clone of JAX, ``--commits`` goes on to 0605bc4a5d ("Make `jax.ShapeDtypeStruct`
immutable ...").

``--newest 0.10.2`` stands in for the index's newest so that a machine with the kit's environments built runs
nothing new (the default asks the index, and would install the newest release the first time).
"""

from __future__ import annotations

import dataclasses
import json
import os
import sys
from pathlib import Path

import pytest

from kit import cli
from kit.config import Matrix, parse_matrix

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

REPO = Path(__file__).resolve().parent.parent
REPORT = REPO / "examples" / "issues" / "shapedtypestruct-immutable.md"
FIRST_BAD_COMMIT = "0605bc4a5dbe688489b38ea0c8ea89c24e1a7327"


def _matrix(tmp_path: Path) -> Matrix:
    """The kit's matrix.toml (its environments, its index); records and reports in ``tmp_path``."""
    matrix = parse_matrix(tomllib.loads((REPO / "matrix.toml").read_text(encoding="utf-8")), REPO / "matrix.toml")
    return dataclasses.replace(matrix, results_dir=tmp_path / "reports" / "results")


@pytest.mark.integration
def test_a_report_goes_to_its_release_range_and_with_a_clone_to_its_commit(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    matrix = _matrix(tmp_path)
    argv = [str(REPORT), "--run", "--newest", "0.10.2", "--checks-dir", str(tmp_path / "checks")]
    clone = os.environ.get("KIT_JAX_REPO")
    if clone:
        argv += ["--commits", "--jax-repo", clone]
    assert cli.cmd_triage(matrix, argv, print, None) == 0
    out = capsys.readouterr().out
    assert "== triage: reproduced on the reporter's release 0.6.1; still there in the newest release, 0.10.2" in out
    assert "jax 0.6.1: exit 1, RuntimeError: Cannot reassign attributes (shape)" in out
    # 0.6.1 and 0.10.2 behave the same, so 0.6.0 (where the report says it worked) ran too: their difference decides
    assert "jax 0.6.1: AFFECTED; jax 0.6.0: UNAFFECTED; jax 0.10.2: AFFECTED" in out
    # The bisect's two ends are triage's own runs, judged by the check: not run again (docs/triage.md).
    assert "probe jax 0.6.0: good [triage] the check's judge on triage's run: behaves as on jax 0.6.0" in out
    assert "probe jax 0.6.1: bad [triage] the check's judge on triage's run: BEHAVES AS REPORTED" in out
    (written,) = (tmp_path / "reports").glob("bisect-*.json")
    data = json.loads(written.read_text())
    assert (data["last_same"], data["first_different"]) == ("0.6.0", "0.6.1")
    assert sorted(data["answered_by_triage"]) == ["0.6.0", "0.6.1"]
    assert data["probed_now"] == []
    records = sorted((tmp_path / "reports" / "triage" / "records").glob("*.json"))
    assert len(records) == 3  # the triage's own runs, kept apart from the matrix's records
    if clone:
        assert data["commits"]["verdict"] == "commit"
        assert data["commits"]["first_different"]["hash"] == FIRST_BAD_COMMIT


@pytest.mark.integration
def test_a_quote_with_a_random_line_is_confirmed_on_the_reporter_s_release(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # Issue 49: the report quotes a printed random float beside the line that carries the bug; no run prints that
    # float again, so the quote once matched neither run ("unconfirmed"), and the float was judged as the outcome.
    report = REPO / "examples" / "issues" / "custom-remat-random-line.md"
    argv = [str(report), "--run", "--newest", "0.11.0", "--checks-dir", str(tmp_path / "checks")]
    assert cli.cmd_triage(_matrix(tmp_path), argv, print, None) == 0
    out = capsys.readouterr().out
    assert "noise, not judged: printed line 1" in out
    assert "differs: printed line 2: prints 'has custom_remat: False' on 0.10.2" in out
    assert "confirmed: the report's quoted output" in out and "(1 quoted line that varies" in out
    assert "NOT confirmed" not in out and "unconfirmed" not in out
