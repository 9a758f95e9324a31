"""What a record is: its schema, the fields the kit reads from it, and how an older one is upgraded.

A record is one JSON object per run (the layout is in docs/architecture.md).
`parse_record` turns a file's text into a record of this kit's `SCHEMA`, or
raises `RecordError` with one sentence saying why the file cannot be used,
whatever the text holds: readers list such files and go on.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path

from .verdict import STATUSES as STATUSES, VERDICTS as VERDICTS
from ..file_names import name_part_problem
from .json_text import JsonTextError, decode
from ..json_types import JsonObject

SCHEMA = 1
"""The record schema this kit writes. Readers accept this and older ones."""

RecordJson = JsonObject
"""A record's JSON object, as a file holds it (`kit.records.record.Record` is the typed record)."""

# schema N -> function upgrading a schema-N record to schema N + 1. Nothing to
# migrate yet; when SCHEMA becomes 2, add ``1: _upgrade_1_to_2`` here.
MIGRATIONS: dict[int, Callable[[RecordJson], RecordJson]] = {}



class RecordError(ValueError):
    """A record file that cannot be used; the message says why."""


@dataclass(frozen=True)
class UnusableFile:
    """A file in the results folder that could not be used, and why."""

    path: Path
    reason: str


def parse_record(text: str) -> RecordJson:
    """Decode, migrate to `SCHEMA` and validate one record; `RecordError` if unusable, for any text."""
    try:
        data = decode(text)
    except JsonTextError as error:
        raise RecordError(str(error)) from None
    if not isinstance(data, dict):
        raise RecordError(f"not a record: top level is a JSON {type(data).__name__}, not an object")
    return validate(migrate(data))


def migrate(record: RecordJson) -> RecordJson:
    """Upgrade an older-schema record step by step to `SCHEMA`."""
    schema = record.get("schema")
    if not isinstance(schema, int) or isinstance(schema, bool):
        raise RecordError(f"no usable 'schema' field (found {_short(schema)})")
    if schema > SCHEMA:
        raise RecordError(
            f"written by a newer kit (schema {_short(schema)}; this kit reads up to {SCHEMA}); "
            "upgrade the kit to read it"
        )
    while schema < SCHEMA:
        upgrade = MIGRATIONS.get(schema)
        if upgrade is None:
            raise RecordError(f"schema {_short(schema)} is too old and no migration to {schema + 1} exists")
        record = upgrade(dict(record))
        schema += 1
        record["schema"] = schema
    return record


def validate(record: RecordJson) -> RecordJson:
    """Check the fields the kit relies on; `RecordError` names the first bad one."""
    problems = list(_field_problems(record))
    if problems:
        raise RecordError("; ".join(problems))
    return record


# Top-level fields the kit reads, and the JSON types each may have (None: absent or null).
_OBJECTS = ("environment", "evidence", "parameters", "install", "host", "slurm", "metrics")
_TEXTS = ("reason", "reproduce", "kit_version")


def _field_problems(record: Mapping[str, object]) -> Iterable[str]:
    for name in ("check", "status", "created"):
        if not isinstance(record.get(name), str) or not record.get(name):
            yield f"missing or non-text field {name!r}"
    requested = record.get("requested")
    if not isinstance(requested, dict) or not isinstance(requested.get("jax"), str):
        yield "missing 'requested.jax' (which release the record measures)"
    elif any(not isinstance(requested.get(key), (str, type(None))) for key in ("backend", "preset")):
        yield "field 'requested.backend' or 'requested.preset' is not text"
    yield from _name_problems(record)
    future = _future_date(record.get("created"))
    if future:
        yield future
    if record.get("status") not in STATUSES and isinstance(record.get("status"), str):
        yield f"unknown status {_short(record.get('status'))} (expected one of {', '.join(STATUSES)})"
    if record.get("verdict") not in VERDICTS:
        yield f"unknown verdict {_short(record.get('verdict'))}"
    for name in _OBJECTS:
        if record.get(name) is not None and not isinstance(record[name], dict):
            yield f"field {name!r} is not an object"
    for name in _TEXTS:
        if record.get(name) is not None and not isinstance(record[name], str):
            yield f"field {name!r} is not text"
    if record.get("duration_s") is not None and not _number(record["duration_s"]):
        yield "field 'duration_s' is not a number"
    evidence = record.get("evidence")
    if isinstance(evidence, dict) and evidence.get("summary") is not None:
        if not isinstance(evidence["summary"], dict):
            yield "field 'evidence.summary' is not an object"
    yield from _metric_problems(record.get("metrics"))


def _name_problems(record: Mapping[str, object]) -> Iterable[str]:
    """The fields that become parts of file names (a plot per backend, a series per check): one rule,
    `kit.file_names`, checked here where a record enters, so ``x/../../tmp/p`` never becomes a path."""
    requested, environment = record.get("requested"), record.get("environment")
    places = {"check": record.get("check") if isinstance(record.get("check"), str) else None,  # else said above
              "requested.backend": requested.get("backend") if isinstance(requested, dict) else None,
              "environment.backend": environment.get("backend") if isinstance(environment, dict) else None}
    for where, value in places.items():
        problem = name_part_problem(value, f"field {where!r}") if value not in (None, "") else None
        if problem:
            yield problem


FUTURE_SLACK = timedelta(days=1)
"""How far ahead of this machine's clock a record's date may be (another node's clock, a time zone slip)."""


def _future_date(created: object) -> str | None:
    """Why a record dated ahead of this machine's clock is unusable: as the newest of its cell it would stay the
    newest whatever ran after it, so no fresh run could displace it. None for a date that is not ahead."""
    try:
        when = datetime.fromisoformat(str(created).replace("Z", "+00:00"))
    except ValueError:
        return None  # sorts as the oldest: harmless
    when = when if when.tzinfo is not None else when.replace(tzinfo=timezone.utc)
    now = datetime.now(timezone.utc)
    if when <= now + FUTURE_SLACK:
        return None
    return (f"dated {_short(created)}, ahead of this machine's clock ({now:%Y-%m-%dT%H:%M:%SZ}): as the newest of "
            "its cell it would hide every later run")


def _metric_problems(metrics: object) -> Iterable[str]:
    """Each metric as kit/run/protocol.py writes it; a sample may be null (a NaN the run measured)."""
    if not isinstance(metrics, dict):
        return
    for name, metric in metrics.items():
        samples = metric.get("samples") if isinstance(metric, dict) else None
        if not isinstance(samples, list) or not all(sample is None or _number(sample) for sample in samples):
            yield f"metric {_short(name)}: samples are not a list of numbers"
        elif not isinstance(metric.get("unit", ""), str) or metric.get("better", "lower") not in ("lower", "higher"):
            yield f"metric {_short(name)}: unit is not text or better is not lower/higher"


def _number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _short(value: object, limit: int = 60) -> str:
    """A value as a reason quotes it: a hostile file must not make the reason huge."""
    try:
        text = repr(value)
    except ValueError:  # an integer too long to print
        return "a number too long to print"
    return text if len(text) <= limit else text[: limit - 1] + "…"
