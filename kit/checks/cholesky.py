"""The cholesky check: does a batch-sharded jnp.linalg.cholesky split across devices? (`repro.cholesky_scaling`)

The scaling check's question for another op, as one module: its parameters (scaling's rules for the keys it
shares, registered once in `repro.parameters`), its key figure, and the summary figures
read off the compiled HLO.
"""

from __future__ import annotations


from .builtin import SPEEDUP_DEVICE_COUNTS, BuiltinCheck, Summary, batch_words, number_text



def key_figure(summary: Summary) -> str:
    parts = batch_words(summary, "Cholesky", "cholesky_batch_per_device", "cholesky_fed_by")
    speedups = [f"{text}x @{n}" for n in SPEEDUP_DEVICE_COUNTS
                if (text := number_text(summary.get(f"cholesky_speedup_{n}"), ".2f")) is not None]
    if speedups:
        parts.append("speedup over 1 device (not weighed): " + ", ".join(speedups))
    if summary.get("positive_control_ok") is False:
        parts.append("positive control FAILED")
    return "; ".join(parts)


CHECK = BuiltinCheck(
    name="cholesky",
    description="does a batch-sharded cholesky split across devices?",
    repro="repro.cholesky_scaling",
    verdict_from="the compiled HLO (the Cholesky custom call's per-device batch, the collectives feeding it), a "
                 "positive control that must show a collective; timings shown, never weighed",
    key_figure=key_figure,
    order=2,
    structural_keys=("all_gathers", "collectives", "cholesky_batch_per_device", "cholesky_fed_by", "devices",
                     "positive_control_ok"),
)
