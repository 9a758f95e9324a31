"""The samples a ``--metric`` bisect measured, kept so that an interrupted one resumes instead of measuring again.

A metric probe is judged against the bounds' samples, so a probe's samples
are kept with the bounds they were judged against: one file per bisect (what
runs, the metric, the bounds, the backend) under ``reports/bisect/metric/``,
holding the bounds' completed rounds (a run of --good and one of --bad, taken
in turn) and every probe's completed pairs (a run of --good, then one of the
probe). Each is written, atomically, as soon as it is complete, so Ctrl-C
loses at most the round or pair under way. Decisions are not kept: they are
made again from the samples, so a rerun with another ``--factor`` reuses
them too.

A later bisect reuses the file when its samples are of this machine, this
kit, the same Python and jaxlib for the bounds, and at most ``MAX_AGE_H``
hours old (a shared machine's load moves over a day); otherwise it says which
of these differs and measures afresh. ``--fresh`` always measures afresh.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from datetime import datetime, timezone
from pathlib import Path
from dataclasses import asdict, dataclass, field
from typing import Callable, Mapping, Optional, Sequence

from ...log_events import Log
from ... import __version__
from ...atomic_files import atomic_write_text
from ...records import JsonTextError, read_json
from ...json_types import JsonObject, as_list, as_number, as_object

SCHEMA = 1
MAX_AGE_H = 24.0

Environment = Sequence[Optional[str]]
"""A release's (python, jaxlib), as the index's metadata names them."""


@dataclass
class _Round:
    """One round of the bounds: a run of --good, then one of --bad, and the seconds each took."""

    good: list[float]
    bad: list[float]
    good_s: float
    bad_s: float
    at: str | None = None
    """When it completed (UTC, ISO 8601); None in a file that did not say."""


@dataclass
class _Pair:
    """One pair of a probe: a run of --good, then one of the probe, and the seconds the pair took."""

    good: list[float]
    probe: list[float]
    seconds: float
    at: str | None = None


@dataclass
class _Kept:
    """The file's content, read once (its shape checked by `_shape_problem`) and written whole."""

    identity: JsonObject
    machine: str
    kit_version: str
    environments: dict[str, list[object]]
    started: float
    by: str
    rounds: list[_Round] = field(default_factory=list)
    pairs: dict[str, list[_Pair]] = field(default_factory=dict)
    unit: str | None = None
    better: str | None = None
    schema: object = SCHEMA

    def to_json(self) -> JsonObject:
        data: JsonObject = {
            "schema": self.schema, "identity": self.identity, "machine": self.machine, "kit_version": self.kit_version,
            "environments": self.environments, "started": self.started, "by": self.by,
            "rounds": [asdict(r) for r in self.rounds],
            "pairs": {v: [asdict(p) for p in kept] for v, kept in self.pairs.items()}}
        if self.unit is not None or self.better is not None:  # written once the first round is complete
            data.update(unit=self.unit, better=self.better)
        return data

    @classmethod
    def from_json(cls, saved: Mapping[str, object]) -> _Kept:
        """A file `_shape_problem` found of the right shape."""
        def numbers(value: object) -> list[float]:
            return [as_number(x) for x in as_list(value)]

        def text(value: object) -> str | None:
            return None if value is None else str(value)

        rounds = [_Round(numbers(r.get("good")), numbers(r.get("bad")), as_number(r.get("good_s")),
                         as_number(r.get("bad_s")), text(r.get("at")))
                  for r in map(as_object, as_list(saved.get("rounds")))]
        pairs = {str(v): [_Pair(numbers(p.get("good")), numbers(p.get("probe")), as_number(p.get("seconds")),
                                text(p.get("at"))) for p in map(as_object, as_list(kept))]
                 for v, kept in as_object(saved.get("pairs")).items()}
        return cls(dict(as_object(saved.get("identity"))), str(saved.get("machine") or ""),
                   str(saved.get("kit_version") or ""),
                   {str(v): as_list(env) for v, env in as_object(saved.get("environments")).items()},
                   as_number(saved.get("started")), str(saved.get("by") or ""), rounds, pairs,
                   text(saved.get("unit")), text(saved.get("better")), saved.get("schema"))


def _now_text(clock: Callable[[], float]) -> str:
    return datetime.fromtimestamp(clock(), timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def _shape_problem(saved: object) -> str:
    """Why a kept file is not samples as this module writes them ("" when it is): every value read later is checked
    here, so a file of the wrong types is measured again instead of raising mid-bisect."""
    if not isinstance(saved, dict):
        return f"it holds a JSON {type(saved).__name__}, not an object"
    if not _number(saved.get("started")):
        return "its start time is not a number"
    rounds, pairs, environments = saved.get("rounds"), saved.get("pairs", {}), saved.get("environments") or {}
    if not isinstance(rounds, list) or not all(_runs(r, ("good", "bad"), ("good_s", "bad_s")) for r in rounds):
        return "its rounds of the bounds are not runs of numbers"
    if not isinstance(pairs, dict) or not all(isinstance(kept, list) and all(_runs(p, ("good", "probe"), ("seconds",))
                                                                            for p in kept) for kept in pairs.values()):
        return "its probes' pairs are not runs of numbers"
    if not isinstance(environments, dict) or not all(isinstance(env, list) for env in environments.values()):
        return "its environments are not lists of python and jaxlib"
    return ""


def _runs(entry: object, samples: Sequence[str], seconds: Sequence[str]) -> bool:
    if not isinstance(entry, dict):
        return False
    return all(isinstance(entry.get(key), list) and all(_number(x) for x in entry[key]) for key in samples) and \
        all(entry.get(key) is None or _number(entry[key]) for key in seconds)


def _number(value: object) -> bool:
    """A finite int or float (read_json turned NaN into null, which is none)."""
    return isinstance(value, (int, float)) and not isinstance(value, bool)


class MetricSamples:
    """One metric bisect's samples on disk: the bounds' rounds and each probe's pairs."""

    def __init__(self, folder: Path, identity: Mapping[str, object], machine: str, bounds: Mapping[str, Environment],
                 by: str, read: bool, log: Log, clock: Callable[[], float] = time.time) -> None:
        key = json.dumps(identity, sort_keys=True, default=str)
        self.path = folder / f"{hashlib.sha256(key.encode()).hexdigest()[:24]}.json"
        self.log, self.clock = log, clock
        self.reused = False
        self._data = _Kept(identity=dict(as_object(json.loads(key))), machine=machine, kit_version=__version__,
                           environments={v: list(env) for v, env in bounds.items()}, started=clock(), by=by)
        self._write_failed = False
        self.note = self._load(bounds) if read else "--fresh: the bounds and probes are measured afresh"

    # -- reading

    def _load(self, bounds: Mapping[str, Environment]) -> str:
        if not os.path.lexists(self.path):
            return ""  # nothing kept: measure
        try:
            saved = read_json(self.path)  # a FIFO, /dev/zero or 100,000 brackets: one sentence, never a hang
        except JsonTextError as error:
            return f"not reusing the metric samples in {self.path.name} ({error}): measuring afresh"
        problem = _shape_problem(saved)
        if problem:
            return f"not reusing the metric samples in {self.path.name} ({problem}): measuring afresh"
        kept = _Kept.from_json(as_object(saved))
        if not kept.rounds:
            return ""
        why = self._why_not(kept, bounds)
        when = _now_text(lambda: kept.started)
        if why:
            return f"not reusing the metric samples measured from {when} ({why}): measuring afresh"
        self._data, self.reused = kept, True
        pairs = sum(len(p) for p in kept.pairs.values())
        return (f"reusing the metric samples measured from {when} by {kept.by or 'an earlier run'}: "
                f"{len(kept.rounds)} rounds of the bounds and {pairs} probe runs "
                f"(--fresh measures afresh)")

    def _why_not(self, saved: _Kept, bounds: Mapping[str, Environment]) -> str:
        if saved.schema != SCHEMA:
            return "they were kept by another version of this file's layout"
        if saved.machine != self._data.machine:
            return "they were measured on another machine"
        if saved.kit_version != __version__:
            return f"they were measured by kit {saved.kit_version or None}, this is {__version__}"
        kept = saved.environments
        for version, env in bounds.items():
            if list(env) != list(kept.get(version) or []):
                return (f"jax {version} ran with python/jaxlib {'/'.join(map(str, kept.get(version) or ['?']))} "
                        f"then, {'/'.join(map(str, env))} now")
        age_h = (self.clock() - saved.started) / 3600
        if age_h > MAX_AGE_H:
            return (f"they are {age_h:.0f} h old; samples older than {MAX_AGE_H:.0f} h are measured again, "
                    "as this machine's load has moved since")
        return ""

    @property
    def unit(self) -> str:
        return self._data.unit or ""

    @property
    def better(self) -> str:
        return self._data.better or "lower"

    def rounds(self) -> list[tuple[list[float], list[float], float, float]]:
        """The bounds' completed rounds: (--good's samples, --bad's samples, and the seconds each run took)."""
        return [(list(r.good), list(r.bad), r.good_s, r.bad_s) for r in self._data.rounds]

    def pairs(self, version: str, environment: Environment) -> list[tuple[list[float], list[float], float]]:
        """A probe's completed pairs (--good's samples, the probe's, seconds), if it ran with ``environment``."""
        kept = self._data.pairs.get(version) or []
        if kept and list(self._data.environments.get(version) or []) != list(environment):
            return []  # another Python or jaxlib than this run's: its samples are of something else
        return [(list(p.good), list(p.probe), p.seconds) for p in kept]

    def kept_by(self, version: str) -> tuple[str, str]:
        """(the bisect that measured these samples, when ``version``'s last run of them was taken)."""
        runs: Sequence[_Round | _Pair] = self._data.pairs.get(version) or self._data.rounds
        at = runs[-1].at if runs else None
        return self._data.by, at or _now_text(lambda: self._data.started)

    # -- writing

    def add_round(self, good: list[float], bad: list[float], good_s: float, bad_s: float, unit: str,
                  better: str) -> None:
        self._data.rounds.append(_Round(good, bad, round(good_s, 2), round(bad_s, 2), _now_text(self.clock)))
        self._data.unit, self._data.better = unit, better
        self._save()

    def add_pair(self, version: str, environment: Environment, good: list[float], probe: list[float],
                 seconds: float) -> None:
        self._data.environments[version] = list(environment)
        self._data.pairs.setdefault(version, []).append(_Pair(good, probe, round(seconds, 2), _now_text(self.clock)))
        self._save()

    def _save(self) -> None:
        try:
            atomic_write_text(self.path, json.dumps(self._data.to_json(), indent=1, sort_keys=True) + "\n")
        except OSError as exc:
            if not self._write_failed:  # a cache: the bisect goes on, only a resume would measure again
                self.log(f"could not keep the metric samples in {self.path} ({exc.strerror or exc}); "
                         "an interrupted bisect would measure them again")
            self._write_failed = True
