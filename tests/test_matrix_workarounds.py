"""kit.matrix.workarounds: a workaround is stated only when an affected record's own evidence shows it."""

from __future__ import annotations

from typing import Any

from kit.matrix.workarounds import shard_map_figures, shard_map_text


def _evidence(shard_map_share: int, jit_speedup: float = 0.45, shard_map_speedup: float = 2.54) -> dict[str, Any]:
    def case(mode: str, devices: int, lu_batch: int) -> dict[str, Any]:
        return {"loss": "slogdet", "mode": mode, "pass": "forward", "devices": devices, "lu_batch": lu_batch}

    return {
        "structure": [case("jit", 1, 4096), case("shard_map", 1, 4096), case("jit", 4, 4096),
                      case("shard_map", 4, shard_map_share),
                      {"loss": "control", "mode": "shard_map", "pass": "forward", "devices": 4, "lu_batch": None}],
        # The ratio to the control (efficiency) is there too, and is not what the report quotes.
        "scaling": [{"mode": "jit", "pass": "forward", "devices": 4, "slogdet_speedup": jit_speedup,
                     "control_speedup": 5.6, "efficiency": jit_speedup / 5.6},
                    {"mode": "shard_map", "pass": "forward", "devices": 4, "slogdet_speedup": shard_map_speedup,
                     "control_speedup": 2.6, "efficiency": shard_map_speedup / 2.6}],
    }


def test_an_affected_release_whose_shard_map_lu_gets_its_share_supports_the_workaround() -> None:
    figures = shard_map_figures("0.4.35", _evidence(1024))
    assert figures is not None
    assert (figures.lu_batch_shard_map, figures.global_batch, figures.devices) == (1024, 4096, 4)
    assert shard_map_text([figures, shard_map_figures("0.5.2", _evidence(1024, 0.40, 2.05))]) == (
        "`shard_map` instead of jit: on 0.4.35, 0.5.2 each device's LU gets only its share "
        "(1024 of 4096 matrices on 4 devices; under jit, 4096); "
        "slogdet speedup over 1 device @4 under shard_map vs jit: 0.4.35 2.54x vs 0.45x, 0.5.2 2.05x vs 0.40x")


def test_no_workaround_is_claimed_when_shard_map_also_factorises_the_whole_batch() -> None:
    assert shard_map_figures("0.4.35", _evidence(4096)) is None
    assert shard_map_figures("0.4.35", {"summary": {}}) is None
    assert shard_map_text([]) == ""
