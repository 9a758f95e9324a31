"""A record as the kit reads it: typed fields over the JSON object a run wrote.

`Record` owns its JSON: `Record(parse_record(text))` decodes, migrates to the kit's
schema and validates (kit/records/schema.py), `to_json` gives the object back
to be written. The fields the drivers read are properties with their types,
so a record that anyone could have edited reads the same everywhere: a
sub-object that is not an object is empty, a word that is none of the kit's
is None. The rest of the object stays reachable by name (a `Mapping`), an
open evidence mapping included: a check may report anything.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from ..json_types import as_text
from .schema import RecordJson, UnusableFile
from .verdict import Status, Verdict


class Record(Mapping[str, object]):
    """One run's record: its typed fields, and the whole JSON object by name (read-only)."""

    __slots__ = ("_json",)

    def __init__(self, json_object: Mapping[str, object]) -> None:
        self._json: RecordJson = dict(json_object)

    @classmethod
    def of(cls, record: Mapping[str, object]) -> Record:
        """``record`` itself where it is one, else the object a run just wrote, read as a record."""
        return record if isinstance(record, Record) else cls(record)

    def to_json(self) -> RecordJson:
        """The object to write: a copy, so the caller's changes never reach this record."""
        return copy.deepcopy(self._json)

    def __getitem__(self, key: str) -> object:
        return self._json[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._json)

    def __len__(self) -> int:
        return len(self._json)

    def __repr__(self) -> str:
        return f"Record({self.check!r} on {self.jax!r}: {self.status} {self.verdict or ''})"

    # What was run where and when.
    @property
    def check(self) -> str:
        return as_text(self._json.get("check"))

    @property
    def jax(self) -> str:
        """The release the record measures, as requested (``requested.jax``)."""
        return as_text(self.requested.get("jax"))

    @property
    def created(self) -> str:
        return as_text(self._json.get("created"))

    # What it found.
    @property
    def status(self) -> Status | None:
        return Status.of(self._json.get("status"))

    @property
    def status_text(self) -> str:
        """The status as the file says it, for a reader to see (a word this kit does not know included)."""
        return as_text(self._json.get("status"))

    @property
    def ran(self) -> bool:
        return self.status is Status.RAN

    @property
    def verdict(self) -> Verdict | None:
        return Verdict.of(self._json.get("verdict"))

    @property
    def reason(self) -> str:
        return as_text(self._json.get("reason"))

    @property
    def reproduce(self) -> str:
        return as_text(self._json.get("reproduce"))

    @property
    def duration_s(self) -> float | None:
        value = self._json.get("duration_s")
        return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None

    # The sub-objects: empty where absent, or where an edited file holds something else.
    @property
    def requested(self) -> Mapping[str, object]:
        return _object(self._json.get("requested"))

    @property
    def evidence(self) -> Mapping[str, object]:
        return _object(self._json.get("evidence"))

    @property
    def environment(self) -> Mapping[str, object]:
        return _object(self._json.get("environment"))

    @property
    def install(self) -> Mapping[str, object]:
        return _object(self._json.get("install"))

    @property
    def parameters(self) -> Mapping[str, object]:
        return _object(self._json.get("parameters"))

    @property
    def host(self) -> Mapping[str, object]:
        return _object(self._json.get("host"))

    @property
    def slurm(self) -> Mapping[str, object]:
        return _object(self._json.get("slurm"))

    @property
    def metrics(self) -> Mapping[str, object]:
        return _object(self._json.get("metrics"))


def _object(value: object) -> Mapping[str, object]:
    # Not `as_object`: a read-only view of the record's own sub-object, without a copy on every read.
    return value if isinstance(value, Mapping) else {}


@dataclass(frozen=True)
class LoadedRecord:
    """A record and the file it was read from."""

    path: Path
    record: Record

    def __post_init__(self) -> None:
        # A reader may hand over the object a run just wrote: it is read as a record here, once.
        object.__setattr__(self, "record", Record.of(self.record))


@dataclass
class LoadResult:
    entries: list[LoadedRecord] = field(default_factory=list)
    unusable: list[UnusableFile] = field(default_factory=list)

    @property
    def records(self) -> list[Record]:
        return [entry.record for entry in self.entries]
