"""explain --target on a real release: the program runs on CPU host devices, libtpu compiles its exports for a
TPU v5e 2x2 it does not have (jax[tpu] 0.12.0.1 from the index: about 640 MB installed, once per CI run)."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from kit import explain
from kit.config import load_matrix

from tests.real_releases import ROOT

pytestmark = pytest.mark.integration


def test_compiled_for_tpu_v5e_the_thread_programs_lu_is_whole_on_every_chip_on_the_newest_release(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    matrix = dataclasses.replace(load_matrix(ROOT / "matrix.toml"), results_dir=tmp_path / "reports" / "results")
    code = explain.main(matrix, ["--called-from", str(ROOT), "examples/programs/train_slogdet.py",
                                 "--releases", "0.12.0.1", "--target", "tpu:v5e:2x2"], log=lambda line: None)
    lines = capsys.readouterr().out.splitlines()
    assert code == 0 and len(lines) <= 12, lines
    assert "compiled for TPU v5e 2x2 (4 devices), not run" in lines[0]
    assert any("train_slogdet.py:39 `jnp.linalg.slogdet`: every device factorises all 1024 matrices (LU" in line
               for line in lines), lines
    assert any("known problem tpu-sharded-slogdet-lu" in line for line in lines), lines
    # Nothing claimed of releases not measured (issue 58): "no release is safe" was said of them.
    assert lines[-2].startswith("answer: for TPU v5e 2x2 (4 devices) (compiled for it, not run), the measured "
                                "release 0.12.0.1 does not split examples/programs/train_slogdet.py:39 lu")
    assert "releases after 0.12.0.1 were not measured" in lines[-2]
    record = json.loads((tmp_path / "reports" / "explain-train_slogdet-0.12.0.1-tpu-v5e-2x2.json").read_text())
    assert record["target"]["devices"]["kind"] == "TPU v5 lite"  # libtpu's own compile-only devices
    lu = [f for f in record["fingerprints"] if f["op"] == "lu"]
    assert lu and lu[0]["targets"] == ["LuRealDecompositionBlock"] and lu[0]["device_batch"] == 1024
