"""Which records ran the matrix's own parameters, and how the others differ.

`nox -s matrix` runs every check with matrix.toml's parameters; a one-off
(`nox -s scaling-0.6.0 -- --devices 1`, or a preset) measures something else
and must not change the matrix's answer. A record counts when it has no
preset and every parameter matrix.toml configures for its check has that
value (the comparison `records.is_current` makes too).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from repro.parameters import flag, shown

from ..run.records import LoadedRecord

Configured = Mapping[str, Mapping[str, Any]]
"""Per check, the parameters matrix.toml configures (no preset, no command-line overrides)."""


def split_ad_hoc(entries: Iterable[LoadedRecord], configured: Configured | None,
                 ) -> tuple[list[LoadedRecord], list[tuple[LoadedRecord, str]]]:
    """Records of the matrix's parameters, and the others with how they differ."""
    in_matrix: list[LoadedRecord] = []
    ad_hoc: list[tuple[LoadedRecord, str]] = []
    for entry in entries:
        differs = _differs(entry.record, configured)
        if differs:
            ad_hoc.append((entry, differs))
        else:
            in_matrix.append(entry)
    return in_matrix, ad_hoc


def _differs(record: Mapping[str, Any], configured: Configured | None) -> str:
    """How a record's parameters differ from the matrix's, as flags; "" when they do not."""
    check = str(record.get("check"))
    if configured is None or check not in configured:
        return ""  # a check the matrix does not configure has nothing to differ from
    preset = (record.get("requested") or {}).get("preset")
    used = record.get("parameters") or {}
    if check == "scaling":
        # Records from before `processes` existed ran one process.
        used = {"processes": 1, **used}
    # A multi-process run measures something else even where matrix.toml leaves processes at 1.
    wanted = {"processes": 1, **configured[check]} if "processes" in used else configured[check]
    changed = [f"{flag(key)} {shown(used.get(key))}" if key in used else f"no {flag(key)}"
               for key, value in wanted.items() if used.get(key) != value]
    return " ".join(([f"--preset {preset}"] if preset else []) + changed)
