"""What the kit measured of a known problem: one outcome per release and backend, and the range they make.

``known/measured/ID.json`` is written by ``known --measure`` from the records of
its runs (kept under ``reports/known/``) and read back by ``known``, ``audit``
and ``known --verify``. The range is read off the outcomes alone: the releases
that hold the problem, the first measured release after the last one that holds
it (fixed in), and the first holding one after one that did not (introduced in).
"""

from __future__ import annotations

import enum
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping, Sequence

from ..atomic_files import atomic_write_text
from ..errors import KitError
from ..json_types import JsonObject, as_object
from ..records import JsonTextError, Record, Status, Verdict, read_json, release_key
from ..targets import parse_target


class Presence(str, enum.Enum):
    """Was a known problem there in one measured run: present, absent, or untested."""

    PRESENT = "present"
    ABSENT = "absent"
    UNTESTED = "untested"
    """The run decided nothing (not installable, inconclusive, crashed, timed out): never counted either way."""


@dataclass(frozen=True)
class Measurement:
    release: str
    backend: str
    outcome: Presence
    reason: str
    """The record's reason: what the check printed or why nothing was decided."""
    record: str = ""
    """The record's file name under reports/known/results (empty for an audit's run)."""
    target: str = ""
    """The chip it was compiled for (``tpu:v5e:2x2``), nothing run on it; "" for a run on ``backend``."""

    def to_json(self) -> dict[str, str]:
        return {"release": self.release, "backend": self.backend, "outcome": self.outcome.value,
                "reason": self.reason, "record": self.record, **({"target": self.target} if self.target else {})}

    @staticmethod
    def from_json(data: Mapping[str, object]) -> "Measurement":
        return Measurement(str(data["release"]), str(data["backend"]), Presence(data["outcome"]),
                           str(data.get("reason", "")), str(data.get("record", "")), str(data.get("target", "")))


def outcome_of(record: Mapping[str, object]) -> Presence:
    """A check's record as the catalogue counts it: affected holds the problem, unaffected does not."""
    kept = Record.of(record)
    if kept.status is not Status.RAN:
        return Presence.UNTESTED
    verdict = kept.verdict
    if verdict is Verdict.AFFECTED:
        return Presence.PRESENT
    return Presence.ABSENT if verdict is Verdict.UNAFFECTED else Presence.UNTESTED


@dataclass(frozen=True)
class Range:
    """Where a problem holds on one backend, or compiled for one target, from what was measured there."""

    backend: str
    present: tuple[str, ...]
    absent: tuple[str, ...]
    untested: tuple[str, ...]
    introduced_in: str | None
    """The first release holding it right after one measured without it; None: held from the oldest measured."""
    fixed_in: str | None
    """The first release measured without it after the newest holding it; None: open on the newest measured."""
    target: str = ""
    """The chip its runs were compiled for, not run on ("" for runs on ``backend``)."""
    introduced_after: str | None = None
    """The newest release measured without it before ``introduced_in``: the introduction lies after it."""
    fixed_after: str | None = None
    """The newest release measured with it before ``fixed_in``: the fix lies after it, by ``fixed_in``."""
    introduced_unknown: tuple[str, ...] = ()
    """Releases measured between ``introduced_after`` and ``introduced_in`` that decided nothing (not installable,
    untested): any of them may be the first with the problem. Releases never measured between are unknown too:
    a release bisect (``known --measure --bisect``) leaves none."""
    fixed_unknown: tuple[str, ...] = ()
    """The same between ``fixed_after`` and ``fixed_in``: any may be the first without it."""

    @property
    def where(self) -> str:
        """``cpu``, or ``tpu:v5e:2x2 (compiled for TPU v5e 2x2 (4 devices), not run)``: what a line says it is for."""
        return f"{self.target} ({compiled_not_run(self.target)})" if self.target else self.backend

    @property
    def open(self) -> bool:
        return bool(self.present) and self.fixed_in is None

    def holds(self, release: str) -> bool | None:
        """Does the problem hold ``release``? Measured: as measured; else as the nearest measured releases on
        both sides agree; None where they disagree or one side was never measured (untested, said as such)."""
        if release in self.present or release in self.absent:
            return release in self.present
        key = release_key(release)
        decided = sorted([(release_key(r), True) for r in self.present] + [(release_key(r), False) for r in self.absent])
        below = [held for k, held in decided if k < key]
        above = [held for k, held in decided if k > key]
        if below and above and below[-1] == above[0]:
            return below[-1]
        return None

    def to_json(self) -> JsonObject:
        said: JsonObject = {"backend": self.backend, "present_in": list(self.present), "absent_in": list(self.absent),
                "untested_in": list(self.untested), "introduced_in": self.introduced_in, "fixed_in": self.fixed_in,
                "open": self.open}
        if self.target:
            said.update(target=self.target, compiled_not_run=compiled_not_run(self.target))
        # Where each step lies: after which release measured, and the releases between that decided nothing.
        said.update(introduced_after=self.introduced_after, introduced_unknown=list(self.introduced_unknown),
                    fixed_after=self.fixed_after, fixed_unknown=list(self.fixed_unknown))
        return said


def compiled_not_run(target: str) -> str:
    """``compiled for TPU v5e 2x2 (4 devices), not run`` for a target the kit names; the name where it names none."""
    try:
        return parse_target(target).compiled_not_run
    except KitError:
        return f"compiled for {target}, not run"


def ranges(measurements: Sequence[Measurement]) -> list[Range]:
    """One range per backend measured, then one per target compiled for; releases oldest first."""
    places = sorted({(m.target, m.backend) for m in measurements})
    return [_range(backend, [m for m in measurements if (m.target, m.backend) == (target, backend)], target)
            for target, backend in places]


def _range(backend: str, seen: list[Measurement], target: str = "") -> Range:
    seen = sorted(seen, key=lambda m: release_key(m.release))
    decided = [m for m in seen if m.outcome is not Presence.UNTESTED]
    present = tuple(m.release for m in decided if m.outcome is Presence.PRESENT)
    absent = tuple(m.release for m in decided if m.outcome is Presence.ABSENT)
    introduced = fixed = None
    steps: dict[str, str] = {}  # the release after each step -> the release before it
    for before, after in zip(decided, decided[1:]):
        if before.outcome is Presence.ABSENT and after.outcome is Presence.PRESENT and introduced is None:
            introduced = after.release
            steps[after.release] = before.release
        if before.outcome is Presence.PRESENT and after.outcome is Presence.ABSENT:
            fixed = after.release  # the last such step: a problem that came back is open again until fixed after
            steps[after.release] = before.release
    if present and fixed is not None and release_key(fixed) < release_key(present[-1]):
        fixed = None
    untested = tuple(m.release for m in seen if m.outcome is Presence.UNTESTED)

    def between(after: str | None) -> tuple[str | None, tuple[str, ...]]:
        if after is None:
            return None, ()
        low, high = release_key(steps[after]), release_key(after)
        return steps[after], tuple(r for r in untested if low < release_key(r) < high)

    (introduced_after, introduced_unknown), (fixed_after, fixed_unknown) = between(introduced), between(fixed)
    return Range(backend, present, absent, untested, introduced, fixed, target, introduced_after, fixed_after,
                 introduced_unknown, fixed_unknown)


def measured_path(folder: Path, entry_id: str) -> Path:
    return folder / "measured" / f"{entry_id}.json"


def load_measurements(folder: Path, entry_id: str) -> list[Measurement]:
    """What ``known --measure`` wrote for the entry; [] when it was never measured or the file is unusable
    (`measured_problem` says which)."""
    try:
        return _read_measurements(folder, entry_id)
    except (JsonTextError, KeyError, ValueError, TypeError):
        return []  # measured again by the next --measure


def measured_problem(folder: Path, entry_id: str) -> str:
    """Why the entry's ``known/measured/ID.json`` cannot be read ("" when it reads, or was never written): a torn
    or hand-edited file is said, never taken for "never measured"."""
    try:
        _read_measurements(folder, entry_id)
    except (JsonTextError, KeyError, ValueError, TypeError) as error:
        why = str(error) if isinstance(error, JsonTextError) else f"not the shape known --measure writes ({error!r})"
        return (f"{measured_path(folder, entry_id).name} cannot be read ({why}): its range is unknown until "
                f"known --measure --only {entry_id} writes it again")
    return ""


def _read_measurements(folder: Path, entry_id: str) -> list[Measurement]:
    path = measured_path(folder, entry_id)
    if not path.exists() and not path.is_symlink():
        return []
    measurements = as_object(read_json(path))["measurements"]
    if not isinstance(measurements, list):
        raise TypeError("measurements is not a list")
    return [Measurement.from_json(as_object(item)) for item in measurements]


def save_measurements(folder: Path, entry_id: str, measurements: Sequence[Measurement], date: str,
                      bisection: JsonObject | None = None) -> Path:
    """``known/measured/ID.json``: the outcomes, the ranges they make and, where a release bisect found them
    (`kit.known.bisection`), what it searched and each boundary it found."""
    path = measured_path(folder, entry_id)
    ordered = sorted(measurements, key=lambda m: (m.target, m.backend, release_key(m.release)))
    document: JsonObject = {"id": entry_id, "measured_on": date, "measurements": [m.to_json() for m in ordered],
                            "ranges": [r.to_json() for r in ranges(ordered)]}
    if bisection is not None:
        document["bisection"] = bisection
    kept = measured_extra(folder, entry_id, "workaround")  # the workaround's runs stay until measured again
    if kept is not None:
        document["workaround"] = kept
    text = json.dumps(document, indent=1) + "\n"
    atomic_write_text(path, text)
    return path


def measured_extra(folder: Path, entry_id: str, key: str) -> object:
    """A part of ``known/measured/ID.json`` beside the measurements (``bisection``, ``workaround``); None when the
    file or the part is not there (or the file is unusable)."""
    path = measured_path(folder, entry_id)
    try:
        return as_object(read_json(path)).get(key) if path.is_file() else None
    except (JsonTextError, ValueError, TypeError):
        return None


def save_extra(folder: Path, entry_id: str, key: str, value: object) -> Path:
    """``known/measured/ID.json`` with one part beside the measurements replaced (the file must exist)."""
    path = measured_path(folder, entry_id)
    document = dict(as_object(read_json(path)))
    document[key] = value
    atomic_write_text(path, json.dumps(document, indent=1) + "\n")
    return path
