"""What a built-in check declares about itself, in one value (`BuiltinCheck`): the rest of the kit asks it.

A built-in check is a repro in ``repro/`` that the kit runs as ``python -m MODULE``; its module here says
everything the kit must know of it beside the repro: its parameters (registered with `repro.parameters`, which
the repro reads too), where its verdict comes from, its key figure in words, which figure plots its records,
which of its summary's figures are read off the compiled HLO, and which workaround its evidence can show.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Protocol

from repro import parameters as parameter_rules

from ..json_types import JsonObject

Summary = Mapping[str, object]
"""A record's ``evidence.summary``, the JSON object a check's run reported: open (a check may report anything),
so a key figure reads it value by value, each checked for its kind before it is said."""

Parameters = Mapping[str, object]
"""A check's parameter values as `repro.parameters` holds them (TOML's and the command line's kinds: numbers,
strings, lists), each checked by the check's `parameter_rules.Rule` where it enters."""


class ParameterRule(Protocol):
    """What the kit reads of a parameter's `repro.parameters.Rule` (the repro's own test of a value stays there)."""

    @property
    def expected(self) -> str: ...

    @property
    def is_list(self) -> bool: ...


@dataclass(frozen=True)
class BuiltinCheck:
    """One built-in check, as the matrix, the report, the records and the command line ask of it."""

    name: str
    description: str
    """What it asks, in a few words (matrix.toml's ``description`` overrides it)."""
    repro: str
    """The module its runs start: ``python -m repro.scaling``."""
    verdict_from: str
    """Where its verdict comes from, in words (docs and ``--help``): the compiled HLO, references..."""
    key_figure: Callable[[Summary], str]
    """Its record's ``evidence.summary`` → the few numbers that show the verdict, in words ("" for none)."""
    order: int = 100
    """Its column among the checks: lower first, then by name."""
    structural_keys: tuple[str, ...] = ()
    """Summary figures read off the compiled HLO: every process of a multi-process run must report the same."""
    plot: str = ""
    """Which of `kit.matrix.plots`' figures shows its records: "speedup", "errors", or "" for none."""
    workaround: str = ""
    """Which workaround its affected records' evidence can show (`kit.matrix.workarounds`): "shard_map", or ""."""
    summary_backfill: Callable[[Summary, object], JsonObject] | None = None
    """Summary keys rebuilt from the detail (the record's ``evidence``, as JSON holds it) of records written
    before the summary held them."""

    @property
    def rules(self) -> Mapping[str, ParameterRule]:
        return parameter_rules.RULES[self.name]

    @property
    def defaults(self) -> Parameters:
        return parameter_rules.DEFAULTS[self.name]

    @property
    def presets(self) -> Mapping[str, Parameters]:
        return parameter_rules.PRESETS.get(self.name, {})

    @property
    def compiles_for_targets(self) -> bool:
        """Does it take ``--target`` (compile for a chip this machine lacks, `kit.targets`)?"""
        return "target" in self.rules


SPEEDUP_DEVICE_COUNTS = (2, 4)
"""The device counts a sharding check's summary gives speedups over one device for (``slogdet_speedup_4``)."""


def number_text(value: object, spec: str) -> str | None:
    """A number formatted by ``spec``; None for anything else (a bool is no number here)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return format(value, spec)


def batch_words(summary: Summary, op: str, batch_key: str, fed_by_key: str) -> list[str]:
    """A sharding check's structure in words: all-gathers, what feeds ``op``, its batch per device of the whole."""
    parts: list[str] = []
    gathers = summary.get("all_gathers")
    if isinstance(gathers, int):
        parts.append(f"{gathers} all-gather" + ("" if gathers == 1 else "s"))
    fed_by = summary.get(fed_by_key)
    if isinstance(fed_by, str):
        parts.append(f"{op} input via {fed_by}" if fed_by else f"no collective before the {op}")
    batch, total = summary.get(batch_key), summary.get("global_batch")
    if batch is not None and total is not None:
        devices = summary.get("devices")
        parts.append(f"{op} batch {batch} per device of {total}" + (f" on {devices} devices" if devices is not None else ""))
    return parts
