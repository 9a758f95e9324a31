"""A pyc torn in a release environment's kept bytecode: dropped, and the run made again, never a verdict.

A release's own runs keep the bytecode of what they import under the
environment's ``.kit-pycache`` (`kit.install.bytecode.release_bytecode_env`).
Python checks a pyc's header against its source, not the code after it, so a
pyc whose body was overwritten fails every ``import jax`` with "bad marshal
data". docs/faults.md, "Environments".
"""

from __future__ import annotations

from pathlib import Path

import pytest

from kit.config import parse_matrix
from kit.install.bytecode import PYCACHE
from kit.run import runner
from tests.real_releases import ROOT, release_python


@pytest.mark.integration
def test_a_torn_pyc_in_the_kept_bytecode_is_dropped_and_the_run_made_again(tmp_path: Path) -> None:
    python = release_python("0.6.0")
    (tmp_path / "sums.py").write_text("import jax.numpy as jnp\nassert float(jnp.ones(3).sum()) == 3.0\n")
    matrix = parse_matrix({
        "kit": {"results_dir": str(tmp_path / "results"), "envs_dir": str(ROOT / ".nox" / "jax-envs")},
        "release": [{"version": "0.6.0"}],
        "checks": {"sums": {"script": "sums.py"}},
    }, tmp_path / "matrix.toml")
    runner.run_check(matrix, runner.RunRequest("sums", "0.6.0"), lambda line: None)  # its bytecode kept
    [torn] = (python.parent.parent / PYCACHE).rglob("site-packages/jax/_src/config.*.pyc")
    code = bytearray(torn.read_bytes())
    code[20:60] = bytes(40)  # the header (16 bytes) still matches the source
    torn.write_bytes(bytes(code))
    lines: list[str] = []
    record, _path = runner.run_check(matrix, runner.RunRequest("sums", "0.6.0"), lines.append)
    assert any(line.startswith("the environment's kept bytecode was damaged (ValueError: bad marshal data")
               for line in lines), lines
    assert (record["status"], record["verdict"]) == ("ran", "unaffected"), record["reason"]
    assert torn.read_bytes()[20:60] != bytes(40)  # written whole again by the second run
