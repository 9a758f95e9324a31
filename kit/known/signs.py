"""What a known problem looks like, as an entry declares it, and how well a finding matches that.

An entry may carry two signs beside its check (docs/known.md):

* ``[fingerprint]``: ops, states and ``fed_by`` as ``explain`` reads them from a compiled
  program (`kit.hlo`); its parts are the op, the state, the collective that feeds the
  op's source line, and the backend the entry shows on;
* ``[difference]``: what tells a run with the problem from one without, as ``triage``
  compares two runs: the exception's type, a pattern of its message, a pattern of a
  printed line.

A match says which parts agreed and which did not ("matches 3 of 4 parts: ...; not: on
tpu"), so a partial match reads as one. An entry without a sign is never matched by it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterable, Sequence

from ..errors import ConfigError
from ..hlo import Fingerprint, FingerprintState
from ..json_types import TomlTable
from ..targets import JAX_PLATFORM

_FINGERPRINT_KEYS = {"ops", "states", "fed_by"}
_DIFFERENCE_KEYS = {"exception", "message", "output"}
_STATES = (FingerprintState.WHOLE, FingerprintState.GATHERED, FingerprintState.SPLIT, FingerprintState.COMMUNICATION,
           FingerprintState.EXPECTED)
"""The states a sign may name."""
_HOLDS_WHOLE = (FingerprintState.WHOLE, FingerprintState.GATHERED)
"""A sign's states where its file names none (`kit.hlo.HOLDS_WHOLE`, in the order a file would write them)."""
_PATTERN_CHARS = 200


@dataclass(frozen=True)
class FingerprintSign:
    """An op in one of ``states``, on a source line some op of which a ``fed_by`` collective feeds."""

    ops: tuple[str, ...]
    states: tuple[FingerprintState, ...] = _HOLDS_WHOLE
    fed_by: str = ""


@dataclass(frozen=True)
class DifferenceSign:
    """The run with the problem raises ``exception`` (its message matching ``message``), or prints a line
    matching ``output``; each empty where the entry does not say."""

    exception: str = ""
    message: str = ""
    output: str = ""


@dataclass(frozen=True)
class Raised:
    """An exception a run of a report's block raised, as a difference sign reads it: its class and first line."""

    type: str
    text: str


@dataclass(frozen=True)
class Match:
    """How well one finding matched an entry's sign: the parts that agreed and those that did not, in words."""

    entry: str
    agreed: tuple[str, ...]
    missed: tuple[str, ...]

    @property
    def full(self) -> bool:
        return not self.missed

    def how_well(self) -> str:
        """``matches all 3 parts: op lu, state whole, fed by all-gather`` or ``matches 2 of 3 parts: ...; not: ...``."""
        count = len(self.agreed) + len(self.missed)
        if self.full:
            return f"matches all {count} parts: {', '.join(self.agreed)}" if count > 1 else \
                f"matches its one part: {self.agreed[0]}"
        return f"matches {len(self.agreed)} of {count} parts: {', '.join(self.agreed)}; not: {', '.join(self.missed)}"


def fingerprint_match(entry: str, sign: FingerprintSign, shows_on: Sequence[str], finding: Fingerprint,
                      same_line: Iterable[Fingerprint], platform: str) -> Match | None:
    """The finding against the sign; None unless its op and its state are the sign's (the symptom itself):
    the collective feeding its line and the platform compiled for are how well it matched."""
    if finding.op not in sign.ops or finding.state not in sign.states:
        return None
    agreed = [f"op {finding.op}", f"state {finding.state}"]
    missed: list[str] = []
    if sign.fed_by:
        fed = any(sign.fed_by in other.fed_by for other in same_line)
        (agreed if fed else missed).append(f"fed by {sign.fed_by}")
    platforms = [JAX_PLATFORM.get(backend, backend) for backend in shows_on]
    if platform in platforms:
        agreed.append(f"on {platform}")
    else:
        missed.append(f"on {platform} (it shows on {', '.join(dict.fromkeys(platforms))})")
    return Match(entry, tuple(agreed), tuple(missed))


def difference_match(entry: str, sign: DifferenceSign, raised: Raised | None, other: Raised | None,
                     lines: Sequence[str]) -> Match | None:
    """Two runs that differ against the sign: ``raised`` and ``other`` are what the bad and the good run raised
    (None where it raised nothing; `kit.triage.block_outcome`'s outcomes), ``lines`` the bad run's printed lines
    that differ. None where no declared part agrees, or only the exception's type where the entry gives its message
    too."""
    agreed: list[str] = []
    missed: list[str] = []
    if sign.exception:
        name = raised.type if raised is not None else ""
        ok = name == sign.exception.rpartition(".")[2] and (other.type if other is not None else None) != name
        (agreed if ok else missed).append(f"exception {sign.exception}" + ("" if ok or not name else
                                                                           f" (it raised {name})"))
    if sign.message:
        ok = raised is not None and re.search(sign.message, raised.text) is not None
        (agreed if ok else missed).append(f"message /{sign.message}/")
    if sign.output:
        ok = any(re.search(sign.output, line) for line in lines)
        (agreed if ok else missed).append(f"output /{sign.output}/")
    if sign.message and agreed == [f"exception {sign.exception}"]:
        return None  # a TypeError of another message is another problem: the type alone names none
    return Match(entry, tuple(agreed), tuple(missed)) if agreed else None


def fingerprint_sign(table: object, where: str) -> FingerprintSign | None:
    """``[fingerprint]`` of an entry's file, checked; None where there is none."""
    if table is None:
        return None
    table = _table(table, _FINGERPRINT_KEYS, where, "fingerprint")
    ops = _strings(table, "ops", where)
    if not ops:
        raise ConfigError(f"{where}: [fingerprint] needs ops", 'e.g. ops = ["lu", "cholesky"]')
    named = _strings(table, "states", where)
    unknown = [s for s in named if s not in _STATES]
    if unknown:
        raise ConfigError(f"{where}: [fingerprint] state {unknown[0]!r} is not one explain gives",
                          f"the states are: {', '.join(_STATES)}")
    states = tuple(FingerprintState(s) for s in named) or _HOLDS_WHOLE
    fed_by = table.get("fed_by", "")
    if not isinstance(fed_by, str):
        raise ConfigError(f"{where}: [fingerprint] fed_by must be a collective's name", 'e.g. fed_by = "all-gather"')
    return FingerprintSign(ops, states, fed_by.strip())


def difference_sign(table: object, where: str) -> DifferenceSign | None:
    """``[difference]`` of an entry's file, checked (its patterns compile); None where there is none."""
    if table is None:
        return None
    table = _table(table, _DIFFERENCE_KEYS, where, "difference")
    values = {}
    for key in sorted(_DIFFERENCE_KEYS):
        value = table.get(key, "")
        if not isinstance(value, str) or len(value) > _PATTERN_CHARS:
            raise ConfigError(f"{where}: [difference] {key} must be a line of text (at most {_PATTERN_CHARS})",
                              f'e.g. {key} = "..."')
        values[key] = value.strip()
    if not any(values.values()):
        raise ConfigError(f"{where}: [difference] says nothing", "give exception, message or output")
    for key in ("message", "output"):
        try:
            re.compile(values[key])
        except re.error as exc:
            raise ConfigError(f"{where}: [difference] {key} is not a regular expression ({exc})",
                              "escape ( ) [ ] . * + ? with a backslash") from None
    return DifferenceSign(**values)


def _table(table: object, allowed: set[str], where: str, name: str) -> TomlTable:
    if not isinstance(table, dict):
        raise ConfigError(f"{where}: {name} must be a table", f"write it as [{name}]")
    unknown = sorted(set(table) - allowed)
    if unknown:
        raise ConfigError(f"{where}: unknown key {unknown[0]!r} in [{name}]", f"the keys are: {', '.join(sorted(allowed))}")
    return table


def _strings(table: TomlTable, key: str, where: str) -> tuple[str, ...]:
    value = table.get(key, [])
    if not isinstance(value, list) or not all(isinstance(item, str) and item.strip() for item in value):
        raise ConfigError(f"{where}: {key} must be a list of strings", f'e.g. {key} = ["..."]')
    return tuple(item.strip() for item in value)
