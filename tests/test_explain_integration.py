"""kit.explain on real releases (CPU, 4 host devices): the thread's program and the mixed one, 0.4.35 and 0.6.0."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from kit import explain
from kit.config import load_matrix

from tests.real_releases import ROOT, release_python

pytestmark = pytest.mark.integration


@pytest.mark.parametrize("program", ["train_slogdet", "train_mixed"])
def test_the_programs_linalg_ops_are_whole_on_0_4_35_and_split_on_0_6_0(program: str, tmp_path: Path,
                                                                        capsys: pytest.CaptureFixture[str]) -> None:
    for release in ("0.4.35", "0.6.0"):
        release_python(release)  # built first, era-correctly, where it is not
    matrix = dataclasses.replace(load_matrix(ROOT / "matrix.toml"), results_dir=tmp_path / "reports" / "results")
    code = explain.main(matrix, ["--called-from", str(ROOT), f"examples/programs/{program}.py",
                                 "--releases", "0.4.35,0.6.0"], log=lambda line: None)
    lines = capsys.readouterr().out.splitlines()
    assert code == 0 and len(lines) <= 12, lines
    assert "pick jax >= 0.5.3" in lines[-2]
    assert any("known problem sharded-slogdet (matches all 4 parts" in l for l in lines)
    for release, states in (("0.4.35", {"gathered", "whole"}), ("0.6.0", {"split"})):
        record = json.loads((tmp_path / "reports" / f"explain-{program}-{release}.json").read_text())
        linalg = {(f["location"], f["op"]): f["state"] for f in record["fingerprints"]
                  if f["op"] in ("lu", "triangular_solve", "cholesky")}
        assert set(linalg.values()) <= states and len(linalg) == (2 if program == "train_slogdet" else 4), linalg
        expected = [f for f in record["fingerprints"] if f["op"] == "all-reduce" and f["state"] == "expected"]
        assert expected, "the gradient all-reduce is there, and expected"


def test_the_thread_s_own_era_is_affected_in_explain_as_in_scaling(tmp_path: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    # Issue 49: 0.4.13 (the lowest in matrix.toml, an installable neighbour of the thread's 0.4.16) writes no
    # num_partitions= in its module header, and explain once assumed one partition there and called it
    # unaffected, while every device runs lapack_sgetrf on the whole batch. The facts now come from the module.
    for release in ("0.4.13", "0.4.18"):
        release_python(release)
    matrix = dataclasses.replace(load_matrix(ROOT / "matrix.toml"), results_dir=tmp_path / "reports" / "results")
    code = explain.main(matrix, ["--called-from", str(ROOT), "examples/programs/train_slogdet.py",
                                 "--releases", "0.4.13,0.4.18"], log=lambda line: None)
    lines = capsys.readouterr().out.splitlines()
    assert code == 0, lines
    for release in ("0.4.13", "0.4.18"):
        record = json.loads((tmp_path / "reports" / f"explain-train_slogdet-{release}.json").read_text())
        lu = [f for f in record["fingerprints"] if f["op"] == "lu"]
        assert lu and {f["state"] for f in lu} <= {"gathered", "whole"}, (release, lu)
    # both alike, below the fix: the fixed problem is named (it once fell to the open TPU entry, matched in part)
    assert any(line.startswith("known problem sharded-slogdet (") for line in lines), lines
    assert not any("pick jax >= 0.4" in line for line in lines), lines  # no release below 0.5.3 is called safe
