"""A whole scaling run compiled for TPU v5e 2x2 on a machine without a TPU (slow; needs the index).

jax[tpu] 0.12.0.1 installed as the kit installs it, libtpu compiling for the 4 compile-only devices of
``jax.experimental.topologies``, nothing run: the verdict is read off the TPU compiler's HLO.
"""

from __future__ import annotations

import dataclasses
import json
import sys
from pathlib import Path

import pytest

from kit import commands
from kit.config import Matrix, load_matrix

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def matrix(tmp_path_factory: pytest.TempPathFactory) -> Matrix:
    # Records go to a scratch folder; environments are shared with the sessions.
    return dataclasses.replace(load_matrix(ROOT / "matrix.toml"), results_dir=tmp_path_factory.mktemp("results"))


def test_jax_0_12_0_1_compiled_for_tpu_v5e_2x2_replicates_the_lu_on_every_chip(matrix: Matrix, capsys) -> None:
    argv = ["scaling", "0.12.0.1", "--target", "tpu:v5e:2x2", "--batch", "1024", "--modes", "jit"]
    code = commands.cmd_run(matrix, argv, log=lambda m: print(m, file=sys.stderr))
    out = capsys.readouterr().out
    [path] = list(matrix.results_dir.glob("scaling-0.12.0.1-tpu-*.json"))
    record = json.loads(path.read_text())
    assert code == 0, record["reason"]
    assert record["status"] == "ran", record["reason"]
    assert record["verdict"] == "affected", record["reason"]
    assert record["reason"].endswith("compiled for TPU v5e 2x2 (4 devices), not run.")
    assert record["requested"]["target"]["name"] == "tpu:v5e:2x2"
    environment = record["environment"]
    assert (environment["backend"], environment["device_kind"], environment["device_count"]) == \
        ("tpu", "TPU v5 lite", 4)
    assert environment["compiled_for"] == "TPU v5e 2x2 (4 devices)"
    summary = record["evidence"]["summary"]
    assert summary["lu_batch_per_device"] == summary["global_batch"] == 1024
    assert summary["lu_fed_by"] == "all-gather"
    assert summary["positive_control_ok"] is True  # compiled for the target too
    assert all(timing["runs"] == 0 for timing in record["evidence"]["timings"])  # nothing ran
    assert "compiled for TPU v5e 2x2 (4 devices), not run: AFFECTED" in out


def test_the_matrix_swept_for_tpu_v5e_2x2_compiles_each_release_once_and_then_runs_nothing(
        matrix: Matrix, tmp_path: Path, capsys) -> None:
    """`nox -s matrix -- --target tpu:v5e:2x2`: 0.4.35 not installable for it, 0.12.0.1 affected from libtpu's
    HLO; a second sweep finds both current; the page says each verdict was compiled for the chip, not run."""
    from kit.matrix import sweep
    from kit.matrix.markdown import render_markdown
    from kit.matrix.model import build_report
    from kit.records import load_records

    scaling = dataclasses.replace(matrix.check("scaling"), parameters={
        **matrix.check("scaling").parameters, "devices": [4], "batch": 1024, "modes": ["jit"]})
    small = dataclasses.replace(matrix, results_dir=tmp_path, checks={"scaling": scaling},
                                releases=tuple(r for r in matrix.releases if r.version in ("0.4.35", "0.12.0.1")))
    assert sweep.main(small, ["--target", "tpu:v5e:2x2"], lambda m: print(m, file=sys.stderr)) == 0
    first = {r["requested"]["jax"]: r for r in load_records(tmp_path).records}
    assert (first["0.4.35"]["status"], first["0.12.0.1"]["verdict"]) == ("not-installable", "affected")
    lines: list[str] = []
    sweep.main(small, ["--target", "tpu:v5e:2x2"], lines.append)
    assert "2 of 2 cells are current" in "\n".join(lines)
    assert len(load_records(tmp_path).records) == 2
    page = render_markdown(build_report(load_records(tmp_path).entries, configured={"scaling": scaling.parameters}))
    assert "| tpu:v5e:2x2 | scaling | 0.12.0.1 | affected, compiled for TPU v5e 2x2 (4 devices), not run |" in page
    assert "| tpu:v5e:2x2 | scaling | 0.4.35 | not-installable |" in page


def test_a_gpu_description_of_ones_own_is_what_the_plugin_compiles_for(matrix: Matrix, tmp_path: Path,
                                                                       monkeypatch) -> None:
    """`--target ./mygpu.toml` naming a GpuTargetConfigProto file of the user's (here the A100's, renamed): the
    CUDA plugin compiles for it on 0.12.0.1, where the sharded LU is split, and the record carries the text."""
    import shutil

    shutil.copy(ROOT / "repro" / "targets" / "a100.txtpb", tmp_path / "mygpu.txtpb")
    (tmp_path / "mygpu.toml").write_text('platform = "gpu"\ndescription = "mygpu.txtpb"\ndevices = 4\n'
                                         'chip = "mygpu"\n', encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    mine = dataclasses.replace(matrix, results_dir=tmp_path / "results")
    argv = ["scaling", "0.12.0.1", "--target", "mygpu.toml", "--batch", "1024", "--modes", "jit", "--devices", "4"]
    commands.cmd_run(mine, argv, log=lambda m: print(m, file=sys.stderr))
    [path] = list((tmp_path / "results").glob("scaling-0.12.0.1-*.json"))
    record = json.loads(path.read_text())
    assert (record["status"], record["verdict"]) == ("ran", "unaffected"), record["reason"]
    assert record["reason"].endswith("compiled for 4 MYGPU GPUs, not run.")
    assert record["requested"]["target"]["description_text"] == (tmp_path / "mygpu.txtpb").read_text()
    assert record["environment"]["device_kind"] == "NVIDIA A100-SXM4-80GB"  # what the description says it is
