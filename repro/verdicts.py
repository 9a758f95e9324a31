"""Raw evidence → affected / unaffected / inconclusive, in one place.

Named from the user's side: "affected" means this release replicates the
batched LU on every device (the thread's missing speedup), "unaffected" means
each device factorises only its own share. Structure (the compiled HLO)
decides; timing can only veto an "unaffected" it strongly contradicts,
because on small or shared machines timings are noisy while HLO is exact.
"""

from __future__ import annotations

from typing import Optional, Sequence, Tuple

AFFECTED = "affected"
UNAFFECTED = "unaffected"
INCONCLUSIVE = "inconclusive"

# Timing is evidence only when the control itself got faster with more
# devices; forced host devices on a 2-core machine often do not.
CONTROL_SPEEDUP_FOR_TIMING = 1.5
# Below this, slogdet scales so much worse than the control that a
# "partitioned" structure must be missing something.
EFFICIENCY_CONTRADICTING_UNAFFECTED = 0.5


def scaling_verdict(
    *,
    devices: int,
    global_batch: int,
    lu_batch: Optional[int],
    lu_fed_by: Sequence[str],
    positive_control_ok: bool,
    efficiency: Optional[float] = None,
    control_speedup: Optional[float] = None,
    timing_is_evidence: bool = True,
) -> Tuple[str, str]:
    """The verdict and a reason in words for one compiled slogdet at `devices`.

    lu_batch: matrices the LU custom call factorises per device (None: no LU
    call found). lu_fed_by: collectives upstream of its operand.
    efficiency: slogdet speedup ÷ control speedup at `devices`.
    timing_is_evidence: False where the devices share the same cores (forced
    host CPU devices), so speedups say more about threading than partitioning.
    """
    if not positive_control_ok:
        return INCONCLUSIVE, (
            "The positive control (slogdet sharded on a non-batch axis) showed no collective, "
            "so the detector cannot be trusted on this release."
        )
    if devices < 2:
        return INCONCLUSIVE, f"Only {devices} device was measured; replication needs at least 2 to show."
    if lu_batch is None:
        return INCONCLUSIVE, (
            "No LU custom call (getrf) was found in the compiled slogdet, "
            "so this release lowers it differently and the check does not apply."
        )

    share = global_batch // devices
    upstream = ", ".join(sorted(set(lu_fed_by))) or "no collective"
    figures = (
        f"at {devices} devices the LU factorises {lu_batch} of {global_batch} matrices per device "
        f"(an even share is {share}), fed by {upstream}"
    )
    timing = _timing_words(efficiency, control_speedup, timing_is_evidence)

    if lu_batch >= global_batch or (lu_fed_by and lu_batch > share):
        return AFFECTED, f"Every device factorises the whole batch: {figures}. {timing}"
    if not lu_fed_by and lu_batch == share:
        if timing_is_evidence and _timing_contradicts(efficiency, control_speedup):
            return INCONCLUSIVE, (
                f"The compiled program is partitioned ({figures}), "
                f"but timing disagrees strongly. {timing}"
            )
        return UNAFFECTED, f"Each device factorises only its own share: {figures}. {timing}"
    return INCONCLUSIVE, f"The structure fits neither pattern: {figures}. {timing}"


def _timing_contradicts(efficiency: Optional[float], control_speedup: Optional[float]) -> bool:
    return (
        efficiency is not None
        and control_speedup is not None
        and control_speedup >= CONTROL_SPEEDUP_FOR_TIMING
        and efficiency < EFFICIENCY_CONTRADICTING_UNAFFECTED
    )


def _timing_words(efficiency: Optional[float], control_speedup: Optional[float], is_evidence: bool) -> str:
    if efficiency is None or control_speedup is None:
        return "Timing was not measured."
    # In speedups over one device, each named: the ratio itself (efficiency) reads as a
    # parallel efficiency, which it is not.
    words = (f"Timing over 1 device: slogdet speedup {efficiency * control_speedup:.2f}x, "
             f"control speedup {control_speedup:.2f}x")
    if not is_evidence:
        return words + " (the devices share the same CPU cores, so timing is shown but not weighed)."
    if control_speedup < CONTROL_SPEEDUP_FOR_TIMING:
        return words + " (the control did not scale here, so timing carries little weight)."
    return words + "."
