"""The correctness check: are large-batch det/slogdet right against scipy's float64 references? (`repro.correctness`)"""

from __future__ import annotations

from .builtin import BuiltinCheck, Summary, number_text


def key_figure(summary: Summary) -> str:
    parts: list[str] = []
    err = number_text(summary.get("max_rel_error"), ".1e")
    if err is not None:
        parts.append(f"max rel error {err}")
    bad, first = summary.get("bad_count"), summary.get("first_bad_index")
    if isinstance(bad, int) and bad > 0:
        parts.append(f"{bad} bad" + (f", first at index {first}" if first is not None else ""))
    elif bad == 0:
        parts.append("none bad")
    for name, label in (("nan_count", "NaN"), ("inf_count", "inf")):
        value = summary.get(name)
        if isinstance(value, int) and value > 0:
            parts.append(f"{value} {label}")
    if summary.get("crossed_boundary") is False:
        parts.append("did not reach 2**31 bytes")
    return "; ".join(parts)


CHECK = BuiltinCheck(
    name="correctness",
    description="large-batch det/slogdet against scipy references",
    repro="repro.correctness",
    verdict_from="float64 scipy references on both sides of the 2**31-byte / 2**29-element boundaries, with a "
                 "condition-number-scaled tolerance",
    key_figure=key_figure,
    order=1,
    plot="errors",
)
