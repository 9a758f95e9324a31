"""The committed matrix report is what the kit writes from the committed records, today.

Issue 39: reports stay byte-identical where nothing they say changed. reports/matrix.md and matrix.json
are rebuilt here from reports/results with this checkout's matrix.toml and known_problems.toml; only the
plots are left out (drawing them takes matplotlib seconds), so the lines that link a plot are compared
without it. A wording change that is meant shows here: run `nox -s report` and commit the result.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from kit import cli

ROOT = Path(__file__).resolve().parent.parent
REPORTS = ROOT / "reports"


def _without_plots(markdown: str) -> list[str]:
    """The report's lines, less what only a drawn plot puts there."""
    kept = []
    for line in markdown.splitlines():
        line = re.sub(r" ?Plots across releases: .*$", "", line).rstrip()
        if "(plots/" in line or line == "- Plots skipped (--no-plots).":
            continue
        if line or (kept and kept[-1]):  # the blank line an image took stays one blank line
            kept.append(line)
    return kept


def _plots_unnamed(value: Any) -> Any:
    """The JSON report less its plots: the list of them, the notes on them, and each metric's link to one."""
    if isinstance(value, dict):
        return {k: None if k in ("plot", "plots", "plot_notes") else _plots_unnamed(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plots_unnamed(v) for v in value]
    return value


@pytest.fixture(scope="module")
def rebuilt(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("report")
    argv = ["report", "--results", str(REPORTS / "results"), "--out", str(out), "--no-plots"]
    assert cli.main(argv, matrix_path=str(ROOT / "matrix.toml")) == 0
    return out


def test_the_committed_matrix_md_is_what_the_records_give(rebuilt: Path) -> None:
    committed = _without_plots((REPORTS / "matrix.md").read_text(encoding="utf-8"))
    assert _without_plots((rebuilt / "matrix.md").read_text(encoding="utf-8")) == committed


def test_the_committed_matrix_json_is_what_the_records_give(rebuilt: Path) -> None:
    committed = _plots_unnamed(json.loads((REPORTS / "matrix.json").read_text(encoding="utf-8")))
    assert _plots_unnamed(json.loads((rebuilt / "matrix.json").read_text(encoding="utf-8"))) == committed


def test_the_committed_known_md_is_what_the_catalogue_gives(rebuilt: Path) -> None:
    assert (rebuilt / "known.md").read_text(encoding="utf-8") == (REPORTS / "known.md").read_text(encoding="utf-8")


def test_leaving_out_the_plots_leaves_out_nothing_else() -> None:
    drawn = "x\n\n![Scaling](plots/scaling-cpu.png)\n\nlower is better. Plots across releases: [a](plots/a.png).\nend\n"
    skipped = "x\n\n- Plots skipped (--no-plots).\n\nlower is better. \nend\n"
    assert _without_plots(drawn) == _without_plots(skipped) == ["x", "", "lower is better.", "end"]
    assert _without_plots("x\nlower is worse.\n") != _without_plots("x\nlower is better.\n")
