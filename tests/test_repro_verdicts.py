"""scaling_verdict: structure decides, timing can only veto a strongly contradicted 'unaffected'."""

from __future__ import annotations

from typing import Any, Dict

import pytest

from repro.parameters import timing_weighed, untimed
from repro.verdicts import AFFECTED, INCONCLUSIVE, UNAFFECTED, scaling_verdict

# Figures as measured at 4 forced host devices, global batch 4096.
JAX_0_4_35: Dict[str, Any] = {"devices": 4, "global_batch": 4096, "lu_batch": 4096, "lu_fed_by": ["all-gather"]}
JAX_0_4_13: Dict[str, Any] = {"devices": 4, "global_batch": 4096, "lu_batch": 4096, "lu_fed_by": ["all-reduce"]}
JAX_0_5_3: Dict[str, Any] = {"devices": 4, "global_batch": 4096, "lu_batch": 1024, "lu_fed_by": []}


def verdict(positive_control_ok: bool = True, **figures: Any) -> str:
    return scaling_verdict(positive_control_ok=positive_control_ok, **figures)[0]


@pytest.mark.parametrize(
    "figures, expected",
    [
        (JAX_0_4_35, AFFECTED),
        (JAX_0_4_13, AFFECTED),  # zero-padded all-reduce instead of all-gather: same replication
        (JAX_0_5_3, UNAFFECTED),
        # Global batch on every device even without a detected collective.
        ({**JAX_0_5_3, "lu_batch": 4096}, AFFECTED),
        # Gathered to half the batch: still more than a device's share.
        ({**JAX_0_5_3, "lu_batch": 2048, "lu_fed_by": ["all-gather"]}, AFFECTED),
        # Resharded by a collective but only its own share: neither pattern.
        ({**JAX_0_5_3, "lu_fed_by": ["all-to-all"]}, INCONCLUSIVE),
        ({**JAX_0_5_3, "lu_batch": 512}, INCONCLUSIVE),
        ({**JAX_0_5_3, "lu_batch": None}, INCONCLUSIVE),  # no LU custom call found
        ({**JAX_0_4_35, "devices": 1, "lu_batch": 4096, "lu_fed_by": []}, INCONCLUSIVE),
    ],
)
def test_structure_decides(figures: Dict[str, Any], expected: str) -> None:
    assert verdict(**figures) == expected


def test_failed_positive_control_makes_even_clear_structure_inconclusive() -> None:
    for figures in (JAX_0_4_35, JAX_0_5_3):
        result, reason = scaling_verdict(positive_control_ok=False, **figures)
        assert result == INCONCLUSIVE
        assert "positive control" in reason


def test_timing_vetoes_unaffected_only_when_the_control_scaled() -> None:
    assert verdict(**JAX_0_5_3, efficiency=0.3, control_speedup=3.5) == INCONCLUSIVE
    # The control itself did not scale (forced devices on two cores): timing carries no weight.
    assert verdict(**JAX_0_5_3, efficiency=0.3, control_speedup=1.1) == UNAFFECTED
    assert verdict(**JAX_0_5_3, efficiency=0.9, control_speedup=3.5) == UNAFFECTED


def test_timing_on_devices_sharing_cores_is_shown_but_not_weighed() -> None:
    result, reason = scaling_verdict(positive_control_ok=True, efficiency=0.24, control_speedup=3.6,
                                     timing_is_evidence=False, **JAX_0_5_3)
    assert result == UNAFFECTED
    assert "slogdet speedup 0.86x, control speedup 3.60x" in reason
    assert "not weighed" in reason


def test_timing_never_clears_replicated_work() -> None:
    # Replicated LU is a fact of the compiled program; a cheap LU may just hide it.
    assert verdict(**JAX_0_4_35, efficiency=1.0, control_speedup=3.8) == AFFECTED


def test_reason_states_the_figures_in_words() -> None:
    _, reason = scaling_verdict(positive_control_ok=True, efficiency=0.11, control_speedup=3.79, **JAX_0_4_35)
    assert "4096 of 4096" in reason
    assert "1024" in reason
    assert "all-gather" in reason
    assert "Timing over 1 device: slogdet speedup 0.42x, control speedup 3.79x." in reason


@pytest.mark.parametrize("figures", [JAX_0_4_35, JAX_0_5_3, {**JAX_0_5_3, "lu_batch": 512}])
@pytest.mark.parametrize("timing", [{"efficiency": 0.24, "control_speedup": 3.6},
                                    {"efficiency": 1.0, "control_speedup": 3.8}, {}])
def test_where_timing_is_not_weighed_an_untimed_run_has_the_timed_runs_verdict(figures: Dict[str, Any],
                                                                               timing: Dict[str, Any]) -> None:
    """What lets a bisect probe on CPU skip its timings (`repro.parameters.untimed`): no timing changes the verdict."""
    assert not timing_weighed("scaling", "cpu")
    assert untimed("scaling", "cpu") == {"repeats": 0, "warmup": 0}
    weighed = timing_weighed("scaling", "cpu")
    assert verdict(**figures, **timing, timing_is_evidence=weighed) == verdict(**figures, timing_is_evidence=weighed)


def test_where_timing_can_veto_probes_keep_it() -> None:
    assert timing_weighed("scaling", "cuda")
    assert untimed("scaling", "cuda") == {}
    assert untimed("correctness", "cpu") == {}  # it times nothing to leave out
    assert verdict(**JAX_0_5_3, efficiency=0.24, control_speedup=3.6) != verdict(**JAX_0_5_3)
