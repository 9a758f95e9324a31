"""The cholesky check's repro, judged on HLO compiled by real releases (tests/data/hlo/*cholesky*), and its cell."""

from __future__ import annotations

from pathlib import Path

import pytest

from kit.matrix.key_figures import key_figure
from repro import cholesky_scaling, hlo
from repro import parameters as parameter_rules

HLO = Path(__file__).resolve().parent / "data" / "hlo"


def _figures(release: str, sharded: str) -> dict:
    text = (HLO / f"jax-{release}-cholesky_{sharded}.after_optimizations.txt").read_text()
    return cholesky_scaling._cholesky_figures(hlo.read_evidence(text))


def test_jax_0_4_35_factorises_the_whole_batch_on_each_device_after_an_all_gather() -> None:
    figures = _figures("0.4.35", "batch")
    assert figures["cholesky_calls"] == ["lapack_spotrf_ffi"]
    assert (figures["cholesky_batch"], figures["cholesky_fed_by"]) == (8, ["all-gather"])
    verdict, reason = cholesky_scaling.verdict(4, 8, figures["cholesky_batch"], figures["cholesky_fed_by"], True)
    assert verdict == "affected" and "factorises 8 of 8 matrices per device (an even share is 2)" in reason


def test_jax_0_12_factorises_its_own_share_with_no_collective() -> None:
    figures = _figures("0.12.0.1", "batch")
    assert (figures["cholesky_batch"], figures["cholesky_fed_by"], sum(figures["collectives"].values())) == (2, [], 0)
    assert cholesky_scaling.verdict(4, 8, 2, [], True)[0] == "unaffected"


@pytest.mark.parametrize("release", ["0.4.35", "0.12.0.1"])
def test_the_positive_control_shows_a_collective_on_every_release(release: str) -> None:
    assert sum(_figures(release, "rows")["collectives"].values()) > 0


@pytest.mark.parametrize("args, expected", [
    ((4, 8, 2, [], False), "inconclusive"),  # the control failed: the detector is not trusted
    ((1, 8, 8, [], True), "inconclusive"),  # one device cannot show replication
    ((4, 8, None, [], True), "inconclusive"),  # no potrf call: lowered otherwise
    ((4, 8, 4, ["all-gather"], True), "affected"),  # more than its share, gathered
    ((4, 8, 4, [], True), "inconclusive"),  # neither pattern
])
def test_the_verdict_needs_the_control_two_devices_and_a_cholesky_call(args: tuple, expected: str) -> None:
    assert cholesky_scaling.verdict(*args)[0] == expected


def test_the_repro_refuses_what_the_kit_refuses() -> None:
    assert parameter_rules.problems("cholesky", {**cholesky_scaling.DEFAULTS, "batch": 4097}) == \
        ["--batch 4097 does not split evenly over 2,4 devices: each device count must divide the batch"]
    assert cholesky_scaling.main(["--out", "unused.json", "--matrix-size", "30"]) == 2


def test_its_cell_says_the_batch_per_device_and_what_fed_it() -> None:
    assert key_figure("cholesky", {"all_gathers": 1, "cholesky_fed_by": "all-gather", "cholesky_batch_per_device": 4096,
                                   "global_batch": 4096, "devices": 4, "cholesky_speedup_4": 0.28,
                                   "positive_control_ok": True}) == \
        ("1 all-gather; Cholesky input via all-gather; Cholesky batch 4096 per device of 4096 on 4 devices; "
         "speedup over 1 device (not weighed): 0.28x @4")
