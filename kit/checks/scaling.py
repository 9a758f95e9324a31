"""The scaling check: does a batch-sharded slogdet split its LU across devices? (`repro.scaling`)"""

from __future__ import annotations

from ..json_types import JsonObject
from .builtin import SPEEDUP_DEVICE_COUNTS, BuiltinCheck, Summary, batch_words, number_text


def _speedup_words(summary: Summary) -> str | None:
    """Speedup over one device, slogdet's with the control's beside it: what the timings mean, by name."""
    def at(loss: str) -> list[str]:
        return [f"{text}x @{n}" for n in SPEEDUP_DEVICE_COUNTS
                if (text := number_text(summary.get(f"{loss}_speedup_{n}"), ".2f")) is not None]

    slogdet, control = at("slogdet"), at("control")
    if slogdet or control:
        return "speedup over 1 device: " + "; ".join(
            f"{loss} {', '.join(values)}" for loss, values in (("slogdet", slogdet), ("control", control)) if values)
    # Records with neither the keys nor the detail: their ratio, under its own name.
    ratios = [f"{text} @{n}" for n in SPEEDUP_DEVICE_COUNTS
              if (text := number_text(summary.get(f"efficiency_{n}"), ".2f")) is not None]
    return "slogdet speedup ÷ control speedup " + ", ".join(ratios) if ratios else None


def key_figure(summary: Summary) -> str:
    parts = batch_words(summary, "LU", "lu_batch_per_device", "lu_fed_by")
    timing = _speedup_words(summary)
    if timing:
        parts.append(timing)
    if summary.get("positive_control_ok") is False:
        parts.append("positive control FAILED")
    return "; ".join(parts)


def lu_fed_by(evidence: object) -> str | None:
    """Which collectives fed the LU in the case the verdict came from, read from the detail (a record's evidence,
    as JSON holds it)."""
    if not isinstance(evidence, dict) or not isinstance(evidence.get("verdict_from"), dict):
        return None
    source = evidence["verdict_from"]
    cases = evidence.get("structure") or []
    for case in cases if isinstance(cases, list) else []:
        if isinstance(case, dict) and case.get("loss") == "slogdet" and all(
                case.get(key) == source.get(key) for key in ("mode", "pass", "devices")):
            fed = case.get("lu_fed_by") or []
            return ",".join(str(name) for name in fed) if isinstance(fed, list) else None
    return None


def _backfill(summary: Summary, evidence: object) -> JsonObject:
    return {} if "lu_fed_by" in summary else {"lu_fed_by": lu_fed_by(evidence)}  # records from before the key


CHECK = BuiltinCheck(
    name="scaling",
    description="does a batch-sharded slogdet split across devices?",
    repro="repro.scaling",
    verdict_from="the compiled HLO (the LU custom call's per-device batch, the collectives feeding it), a positive "
                 "control that must show a collective; timing weighed off CPU only",
    key_figure=key_figure,
    order=0,
    structural_keys=("all_gathers", "collectives", "lu_batch_per_device", "lu_fed_by", "devices",
                     "positive_control_ok"),
    plot="speedup",
    workaround="shard_map",
    summary_backfill=_backfill,
)
