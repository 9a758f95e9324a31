"""Issue 58's held-out trial (W2): ``audit 0.7.0`` offered frexp-sharded-jacobian's workaround, which no run ever
measured (``known --json``: ``"workaround_runs": null``) and which does not work (a device_put to one device and a
replicated NamedSharding both raise the same TypeError on 0.7.0). An unmeasured workaround is said as that, on the
console and in the .md; a measured one (dctn-s-default-axes's: works on 0.9.2) is offered as before. The shipped
catalogue and the trial's run reasons."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from kit.config import load_matrix
from kit.known import command
from kit.known.command import audit_main
from kit.known.measured import Measurement, Presence

ROOT = Path(__file__).resolve().parents[1]
REASONS = {  # the trial's console, audit070.log
    "dctn-s-default-axes": "the script exited 1 (affected): jax shape (3, 4, 4) scipy shape (2, 3, 4)",
    "frexp-sharded-jacobian": "the script exited 1 (affected): jacrev raised TypeError: Custom JVP rule must produce "
                              "primal and tangent outputs with corresponding shapes and dtypes, but got:",
}


def test_audit_marks_a_workaround_no_run_measured_and_offers_a_measured_one(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    def audit_runs(matrix: Any, entries: Any, log: Any, records: Path, *, version: str = "",
                   existing: Any = None, ready: Any = lambda: None) -> list[Measurement]:
        ready()
        return [Measurement(version, "cpu", Presence.PRESENT, REASONS[entry.id], "") for entry in entries]

    monkeypatch.setattr(command, "audit_runs", audit_runs)
    matrix = load_matrix(str(ROOT / "matrix.toml"))
    matrix = type(matrix)(**{**matrix.__dict__, "results_dir": tmp_path / "reports" / "results"})
    assert audit_main(matrix, ["0.7.0", "--only", ",".join(REASONS)], print, ROOT / "known") == 1
    console = {line.split()[0]: line for line in capsys.readouterr().out.splitlines() if line.split()[:1]
               and line.split()[0] in REASONS}
    assert console["frexp-sharded-jacobian"].endswith("jax >= 0.7.1   (workaround not measured)")
    assert "gather the input" not in console["frexp-sharded-jacobian"]
    assert console["dctn-s-default-axes"].endswith("pass axes explicitly: axes=tuple(range(-len(s), 0))")
    (md,) = (tmp_path / "reports").glob("audit-jax-0.7.0-*.md")
    frexp_row = next(line for line in md.read_text().splitlines() if line.startswith("| frexp-sharded-jacobian"))
    assert frexp_row.endswith("| (workaround not measured) |") and "gather the input" not in frexp_row
    (data,) = (tmp_path / "reports").glob("audit-jax-0.7.0-*.json")
    shown = {f["id"]: f["workaround_shown"] for f in json.loads(data.read_text())["findings"]}
    assert shown["frexp-sharded-jacobian"] == "(workaround not measured)"
