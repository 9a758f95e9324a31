"""``known --harvest`` for real: one fix of JAX's history confirmed by its own regression test.

92ec3c7a99 ("[mutable-arrays] fix swap vmap bug", 2026-07) changes
``jax/_src/state/primitives.py`` and adds ``test_vmap_axes_basic``: on
jaxlib 0.11.0 with the parent's Python laid over, the test fails with
"Invalid shape for `swap`"; with the fix's, it passes. Needs ``KIT_JAX_REPO``
(a whole clone of JAX) and builds jax 0.11.0's environment with JAX's test
harness once (reused after). A second run probes nothing: the store answers.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from contextlib import redirect_stdout
from pathlib import Path

import pytest

from kit.config import load_matrix
from kit.known.command import known_main

REPO = Path(__file__).resolve().parent.parent
FIX = "92ec3c7a9989bc26b8509daace9bf1f99dc7e955"
NODE = "tests/mutable_array_test.py::MutableArrayTest::test_vmap_axes_basic"


def _harvest(catalogue: Path, clone: str, *more: str) -> str:
    matrix = load_matrix(REPO / "matrix.toml")
    out = io.StringIO()
    with redirect_stdout(out):
        assert known_main(matrix, ["--harvest", "--since", f"{FIX}^", "--until", FIX, "--build", "0.11.0",
                                   "--jax-repo", clone, *more], print, catalogue) == 0
    return out.getvalue()


@pytest.mark.integration
def test_a_real_fix_fails_at_its_parent_and_passes_at_the_fix(tmp_path: Path) -> None:
    clone = os.environ.get("KIT_JAX_REPO")
    if not clone:
        pytest.skip("KIT_JAX_REPO does not name a clone of https://github.com/jax-ml/jax")
    catalogue = tmp_path / "known"
    catalogue.mkdir()
    said = _harvest(catalogue, clone)
    assert "1 candidates" in said and "confirmed: 1 confirmed" in said, said
    result = json.loads((catalogue / "harvested" / f"{FIX[:12]}.json").read_text())
    assert result["status"] == "confirmed" and result["title"] == "[mutable-arrays] fix swap vmap bug"
    (row,) = result["tests"]
    assert row["node_id"] == NODE and row["at_fix"]["outcome"] == "passed"
    assert row["at_parent"]["outcome"] == "failed" and "Invalid shape for `swap`" in row["at_parent"]["message"]
    probes = sorted((catalogue / "harvested" / "probes").iterdir())
    assert [p.name.split("-")[1] for p in probes] == ["fix", "parent"]
    written = [p.stat().st_mtime_ns for p in probes]
    again = _harvest(catalogue, clone)
    assert "1 already harvested on this build" in again and "confirming 0" in again
    assert [p.stat().st_mtime_ns for p in probes] == written  # nothing probed again
    listed = io.StringIO()
    with redirect_stdout(listed):
        known_main(load_matrix(REPO / "matrix.toml"), ["--json"], print, catalogue)
    assert [e["id"] for e in json.loads(listed.getvalue()) if e.get("harvested")] == [f"harvest-{FIX[:10]}"]


@pytest.mark.integration
@pytest.mark.slurm
def test_the_same_fix_confirmed_by_a_slurm_array_task(local_slurm: dict[str, str], tmp_path: Path) -> None:
    clone = os.environ.get("KIT_JAX_REPO")
    if not clone:
        pytest.skip("KIT_JAX_REPO does not name a clone of https://github.com/jax-ml/jax")
    store = tmp_path / "harvested"
    argv = [sys.executable, "-m", "kit", "known", "--harvest", "--since", f"{FIX}^", "--until", FIX, "--build",
            "0.11.0", "--jax-repo", clone, "--store", str(store), "--slurm"]
    done = subprocess.run(argv, cwd=REPO, env=local_slurm, capture_output=True, text=True, timeout=1800)
    said = done.stdout + done.stderr
    assert done.returncode == 0, said[-3000:]
    assert "submitted SLURM job array" in said and f"[1/1] {FIX[:10]} confirmed: 1 confirmed" in said, said[-3000:]
    result = json.loads((store / f"{FIX[:12]}.json").read_text())
    assert result["status"] == "confirmed" and result["tests"][0]["node_id"] == NODE
    again = subprocess.run(argv, cwd=REPO, env=local_slurm, capture_output=True, text=True, timeout=600)
    assert "1 already harvested on this build" in again.stdout and "submitted" not in again.stdout + again.stderr
