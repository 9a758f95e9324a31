"""The one constructor every record is made with: a check's run (`kit.run.runner`) and explain's (`kit.explain`).

A record is its head (what was asked of which release, how it was installed,
its identity, where and when: known before the run), the run's `RunOutcome`,
and the sections only some runs have (``install``'s advice on a release the
index lacks, a SLURM job, explain's modules and fingerprints). `new_record`
puts them in one JSON object of this kit's `SCHEMA`, so the schema's
fields, the kit's version, the host and the date are written in one place.
"""

from __future__ import annotations

import socket
from dataclasses import dataclass, field
from datetime import datetime, timezone

from .. import __version__
from .cells import machine_id
from ..json_types import JsonObject
from .outcome import RunOutcome
from .schema import SCHEMA


def now() -> str:
    """This moment as a record's ``created`` says it (UTC, to the second)."""
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def this_host() -> JsonObject:
    """The machine a record is made on: its name, and the hashed id its cells are kept by."""
    return {"name": socket.gethostname(), "machine_id": machine_id()}


@dataclass(frozen=True)
class RecordHead:
    """What a record says before its run ends: what was asked, how it was installed, its identity, where, when.

    ``subject``: the record's first fields, which say what ran (``{"check": NAME}``, or explain's ``kind``,
    ``program`` and ``args``).
    """

    subject: JsonObject
    requested: JsonObject
    install: JsonObject = field(default_factory=dict)
    identity: JsonObject | None = None
    reproduce: str = ""
    created: str = field(default_factory=now)
    host: JsonObject = field(default_factory=this_host)


def new_record(head: RecordHead, outcome: RunOutcome, **sections: object) -> JsonObject:
    """One record: ``head``, then ``outcome``'s fields, then ``sections`` (each a top-level field; None leaves it out).

    What the run said of itself (``outcome.environment``, ``metrics``, ``parameters``) wins over a section of the
    same name the caller knew before it ran (the host's facts, the parameters asked).
    """
    record: JsonObject = {"schema": SCHEMA, "kit_version": __version__, **head.subject,
                          "requested": dict(head.requested)}
    record.update({name: value for name, value in sections.items() if value is not None})
    record.update(outcome.to_json())
    record.update(install=dict(head.install), host=dict(head.host), reproduce=head.reproduce, created=head.created)
    if head.identity is not None:
        record["identity"] = dict(head.identity)
    return record

