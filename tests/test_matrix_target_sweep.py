"""``nox -s matrix -- --target T``: the checks that compile for a chip, over matrix.toml's releases, per target.

Nothing here installs or compiles: the releases below a target's lowest are written as not installable
without resolving anything (the end-to-end test of that is real), and the cells that would compile are
checked through the requests the sweep makes. The compile itself: tests/test_target_integration.py.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from kit import records
from kit.config import Matrix, parse_matrix
from kit.errors import ConfigError, UsageError
from kit.matrix import sweep
from kit.matrix.cell import Cell
from kit.targets import parse_target

TPU = parse_target("tpu:v5e:2x2")


def _matrix(folder: Path, **kit: Any) -> Matrix:
    raw = {"kit": {"results_dir": "results", **kit},
           "release": [{"version": "0.4.35"}, {"version": "0.5.3"}],
           "checks": {"scaling": {"devices": [1, 2, 4]}, "correctness": {"matrix_size": 4}}}
    return parse_matrix(raw, folder / "matrix.toml")


def test_a_target_sweeps_only_the_checks_compiled_for_it_and_says_the_others_untested(tmp_path: Path) -> None:
    matrix = _matrix(tmp_path)
    options = sweep.parse_options(matrix, ["--target", "tpu:v5e:2x2"])
    assert sweep.select_cells(matrix, options) == [Cell("0.4.35", "scaling", TPU), Cell("0.5.3", "scaling", TPU)]
    assert sweep.target_notes(matrix, options) == [
        "tpu:v5e:2x2: scaling: compiled for TPU v5e 2x2 (4 devices), not run; its timings are untested there "
        "(nothing runs on the chip)",
        "tpu:v5e:2x2: correctness: untested for TPU v5e 2x2 (4 devices): it needs the chip to run, and a target "
        "is compiled for, never run"]
    assert Cell("0.4.35", "scaling", TPU).too_old and not Cell("0.5.3", "scaling", TPU).too_old
    assert not Cell("0.4.35", "scaling").too_old  # on the backend, a release is what the index says


def test_matrix_toml_targets_are_swept_after_the_backends_cells(tmp_path: Path) -> None:
    matrix = _matrix(tmp_path, targets=["tpu:v5e:2x2", "gpu:a100:4"])
    cells = sweep.select_cells(matrix, sweep.parse_options(matrix, []))
    assert [(c.version, c.check, c.target.name if c.target else "cpu") for c in cells] == [
        ("0.4.35", "scaling", "cpu"), ("0.4.35", "correctness", "cpu"),
        ("0.5.3", "scaling", "cpu"), ("0.5.3", "correctness", "cpu"),
        ("0.4.35", "scaling", "tpu:v5e:2x2"), ("0.5.3", "scaling", "tpu:v5e:2x2"),
        ("0.4.35", "scaling", "gpu:a100:4"), ("0.5.3", "scaling", "gpu:a100:4")]
    alone = sweep.select_cells(matrix, sweep.parse_options(matrix, ["--target", "gpu:a100:4", "--only", "0.5.3"]))
    assert alone == [Cell("0.5.3", "scaling", parse_target("gpu:a100:4"))]  # --target: that chip alone


def test_an_unknown_target_in_matrix_toml_is_a_config_error_naming_the_nearest(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"kit\.targets in matrix\.toml: unknown --target 'tpu:v5e:2z2'") as caught:
        _matrix(tmp_path, targets=["tpu:v5e:2z2"])
    assert "did you mean tpu:v5e:2x2" in caught.value.tip


@pytest.mark.parametrize("argv, said", [
    (["--target", "tpu:v5e:2x2", "--backend", "cuda"], "--backend cuda would run nothing"),
    (["--target", "tpu:v5e:2x2", "--slurm"], "--slurm does not take targets yet"),
    (["--target", "tpu:v5e:3x3"], "unknown --target 'tpu:v5e:3x3'"),
])
def test_target_options_that_cannot_go_together_are_one_usage_error(tmp_path: Path, argv: list[str], said: str) -> None:
    with pytest.raises(UsageError, match=said.replace("-", r"\-")):
        sweep.parse_options(_matrix(tmp_path), argv)


def test_a_target_cell_installs_the_chips_compiler_and_hands_the_repro_the_target(tmp_path: Path) -> None:
    matrix = _matrix(tmp_path)
    request = sweep._request(Cell("0.5.3", "scaling", TPU), sweep.parse_options(matrix, ["--target", "tpu:v5e:2x2"]))
    assert request.backend == "tpu"  # jax[tpu]: libtpu compiles, nothing runs
    assert request.target == TPU and "target" not in request.overrides  # typed until the run's parameters
    assert request.reproduce == "nox -s scaling-0.5.3 -- --target tpu:v5e:2x2"  # as the check session writes it
    project = sweep._request(Cell("0.5.3", "scaling", TPU), sweep.SweepOptions(project=True, targets=(TPU,)))
    assert project.reproduce == "jax-kit scaling 0.5.3 --target tpu:v5e:2x2"


def test_a_release_below_the_targets_lowest_is_not_installable_and_current_per_target(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Real from the command line to the record: nothing is resolved or installed for a release too old."""
    matrix = _matrix(tmp_path)
    lines: list[str] = []
    assert sweep.main(matrix, ["--target", "tpu:v5e:2x2", "--only", "0.4.35"], lines.append) == 0
    [record] = records.load_records(matrix.results_dir).records
    assert (record["status"], record["requested"]["backend"]) == ("not-installable", "tpu")
    assert record["reason"].startswith("jax 0.4.35 cannot compile for TPU v5e 2x2 (4 devices): the kit compiles for "
                                       "tpu targets from jax 0.5.3 on")
    assert record["verdict"] is None  # never unaffected
    assert json.loads(record["parameters"]["target"])["name"] == "tpu:v5e:2x2"
    assert record["reproduce"] == "nox -s scaling-0.4.35 -- --target tpu:v5e:2x2"
    table = capsys.readouterr().out
    assert "0.4.35   scaling for tpu:v5e:2x2  not-installable" in table
    assert "tpu:v5e:2x2: correctness: untested for TPU v5e 2x2 (4 devices)" in table

    lines.clear()
    sweep.main(matrix, ["--target", "tpu:v5e:2x2", "--only", "0.4.35"], lines.append)
    assert "1 of 1 cells are current" in "\n".join(lines)
    assert len(records.load_records(matrix.results_dir).records) == 1  # re-running the sweep ran nothing new

    lines.clear()
    sweep.main(matrix, ["--target", "gpu:a100:4", "--only", "0.4.35"], lines.append)
    assert "0 of 1 cells are current" in "\n".join(lines)  # another chip's record never stands for this one
    assert len(records.load_records(matrix.results_dir).records) == 2
    configured = {"scaling": dict(matrix.check("scaling").parameters)}
    assert records.newest_records_here(matrix.results_dir, "cpu", configured) == {}  # nor for the backend's cell
