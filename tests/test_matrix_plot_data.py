"""kit.matrix.plot_data: series read from evidence, with or without the repro's own speedup figures."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kit.matrix.plot_data import scaling_curves, speedup_curves

FIXTURES = Path(__file__).parent / "fixtures" / "records" / "cpu-laptop-sweep"


def _timing(mode: str, loss: str, devices: int, median_s: float) -> dict:
    return {"mode": mode, "pass": "forward", "loss": loss, "devices": devices, "median_s": median_s}


def test_speedups_come_from_the_repros_scaling_figures_when_there() -> None:
    evidence = {"scaling": [{"mode": "jit", "pass": "forward", "devices": 1, "slogdet_speedup": 1.0,
                             "control_speedup": 1.0, "efficiency": 1.0},
                            {"mode": "jit", "pass": "forward", "devices": 4, "slogdet_speedup": 0.5,
                             "control_speedup": 2.8, "efficiency": 0.18},
                            {"mode": "jit", "pass": "grad", "devices": 4, "slogdet_speedup": 2.0},
                            {"mode": "shard_map", "pass": "forward", "devices": 1, "slogdet_speedup": 1.0}]}
    assert speedup_curves(evidence) == {"jit": [(1, 1.0), (4, 0.5)]}  # one point is no curve
    assert speedup_curves(evidence, "control") == {"jit": [(1, 1.0), (4, 2.8)]}


def test_speedups_are_computed_from_timings_otherwise() -> None:
    # slogdet does not speed up at all while the control halves its time.
    evidence = {"timings": [_timing("jit", "slogdet", 1, 2.0), _timing("jit", "slogdet", 2, 2.0),
                            _timing("jit", "control", 1, 1.0), _timing("jit", "control", 2, 0.5)]}
    assert speedup_curves(evidence) == {"jit": [(1, 1.0), (2, pytest.approx(1.0))]}
    assert speedup_curves(evidence, "control") == {"jit": [(1, 1.0), (2, pytest.approx(2.0))]}


def test_fixture_records_give_a_curve_per_mode() -> None:
    record = json.loads((FIXTURES / "scaling-0.4.35-affected.json").read_text())
    curves = speedup_curves(record["evidence"])
    assert curves
    assert all(points[0] == (1, pytest.approx(1.0)) for points in curves.values())
    assert ("jit", "forward", "slogdet") in scaling_curves(record["evidence"])
