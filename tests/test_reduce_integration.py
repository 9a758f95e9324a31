"""kit.reduce on real releases: a training script whose jit(grad) raises on 0.4.35 and not on 0.5.3, cut down
under a short time limit; the result runs as plain ``python FILE`` in both releases' environments."""

from __future__ import annotations

import dataclasses
import subprocess
from pathlib import Path

import pytest

from kit import reduce
from kit.config import load_matrix
from kit.reduce.command import Handed
from kit.reduce.program import Program

from tests.real_releases import ROOT, release_python

pytestmark = pytest.mark.integration
PROGRAM = ROOT / "tests" / "data" / "reduce" / "eigh_training.py"


def _reduce(tmp_path: Path, program: Path, bad: str, good: str, limit: str, said: list[str]) -> Handed:
    """``reduce PROGRAM --bad BAD --good GOOD --out tmp_path/out --time-limit LIMIT`` as the command runs it."""
    matrix = dataclasses.replace(load_matrix(ROOT / "matrix.toml"), results_dir=tmp_path / "reports" / "results")
    return reduce.main(matrix, ["--called-from", str(ROOT), str(program.relative_to(ROOT)), "--bad", bad, "--good",
                                good, "--out", str(tmp_path / "out"), "--time-limit", limit], log=said.append)


def test_the_exception_under_jit_is_kept_in_a_far_smaller_program(tmp_path: Path) -> None:
    pythons = {release: release_python(release) for release in ("0.4.35", "0.5.3")}
    said: list[str] = []
    code, bisect, issue = _reduce(tmp_path, PROGRAM, "0.4.35", "0.5.3", "90", said)
    assert code == 0 and bisect is None and issue is not None, said
    reduced = (tmp_path / "out" / "eigh_training_min.py").read_text()
    assert Program.parse(reduced).statements < Program.parse(PROGRAM.read_text()).statements // 2, reduced
    for release, python in pythons.items():  # plain python, in a folder of its own, nothing of the kit around
        ran = subprocess.run([str(python), "eigh_training_min.py"], cwd=tmp_path / "out", capture_output=True,
                             text=True, timeout=300, env={"PATH": "/usr/bin:/bin"})
        assert (ran.returncode != 0 and "ValueError" in ran.stderr) == (release == "0.4.35"), (release, ran.stderr)
    text = issue.read_text()
    for needed in ("## Minimal reproducer", "## Output on jax 0.4.35", "## Output on jax 0.5.3", "jax:    0.4.35",
                   "jax:    0.5.3", "ValueError", "## Known problem"):
        assert needed in text, needed
    assert any("statements left" in line for line in said)  # progress while it ran


TIME_SEEDED = ROOT / "tests" / "data" / "reduce" / "time_seeded_accounts.py"


def test_a_time_seeded_wrong_value_on_one_release_is_reduced_not_refused_and_runs_alike_each_time(
        tmp_path: Path) -> None:
    pythons = {release: release_python(release) for release in ("0.4.33", "0.4.34")}
    said: list[str] = []
    code, _, issue = _reduce(tmp_path, TIME_SEEDED, "0.4.33", "0.4.34", "200", said)
    assert code == 0 and issue is not None, said
    reduced = (tmp_path / "out" / "time_seeded_accounts_min.py").read_text()
    assert Program.parse(reduced).statements <= 5 and "time" not in reduced, reduced
    printed = {}
    for release, python in pythons.items():  # plain python, twice: the reproducer prints the same each run
        runs = [subprocess.run([str(python), "time_seeded_accounts_min.py"], cwd=tmp_path / "out",
                               capture_output=True, text=True, timeout=300, env={"PATH": "/usr/bin:/bin"})
                for _ in range(2)]
        assert all(r.returncode == 0 for r in runs) and runs[0].stdout == runs[1].stdout, (release, runs)
        printed[release] = runs[0].stdout
    assert printed["0.4.33"] != printed["0.4.34"]
    assert "`cumsum-bool-dtype`" in issue.read_text()
