"""The cholesky check: does a batch-sharded jnp.linalg.cholesky split across devices? (`repro.cholesky_scaling`)

The scaling check's question for another op, as one module: its parameters (scaling's rules for the keys it
shares, registered here as its repro registers them when it starts), its key figure, and the summary figures
read off the compiled HLO.
"""

from __future__ import annotations

from repro import parameters as parameter_rules

from .builtin import SPEEDUP_DEVICE_COUNTS, BuiltinCheck, Summary, batch_words, number_text

KEYS = ("devices", "batch", "matrix_size", "dtype", "repeats", "warmup", "seed")
DEFAULTS: dict[str, object] = {"devices": [1, 2, 4], "batch": 4096, "matrix_size": 32, "dtype": "float32",
                            "repeats": 5, "warmup": 1, "seed": 0}
parameter_rules.register("cholesky", {key: parameter_rules.RULES["scaling"][key] for key in KEYS}, DEFAULTS,
                         cross=parameter_rules.even_split_problems)


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
