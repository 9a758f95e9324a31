"""The words a run's outcome is told in: its `Status`, its `Verdict`, and where an answer came from (`Source`).

Each is a `str` enum, so a member is equal to (and hashes as) the word a record
file holds: records written before these types existed, and JSON read back from
disk, compare equal without conversion, and ``json.dumps`` writes the word.
This is the only module that spells the words; everywhere else names the
member, so a misspelt verdict is an AttributeError at import, not a silent
"no match" in a report.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable
from typing import TypeVar

W = TypeVar("W", bound="Word")


class Word(str, enum.Enum):
    """A member prints, formats and hashes as its word (``f"{Verdict.AFFECTED}"`` is ``affected``)."""

    def __str__(self) -> str:
        return str.__str__(self)

    def __format__(self, spec: str) -> str:
        return format(str.__str__(self), spec)

    @classmethod
    def of(cls: type[W], value: object) -> W | None:
        """The member for a word read from a file, or None for anything else (absent, null, unknown)."""
        try:
            return cls(value)
        except ValueError:
            return None


class Status(Word):
    """What became of a run, before anyone judged it."""

    RAN = "ran"
    NOT_INSTALLABLE = "not-installable"
    CRASHED = "crashed"
    REFUSED = "refused"
    """The repro declined a size that does not fit this machine's memory (before any work)."""
    TIMED_OUT = "timed-out"
    UNSUPPORTED = "unsupported"
    """The release cannot run what was asked here (e.g. processes joined on a CPU client without
    cross-process collectives)."""
    # A bisect's words for a release it did not run (never in a record):
    YANKED = "yanked"
    """Yanked from the package index: not probed."""
    UNREACHABLE = "unreachable"
    """The index could not say whether it installs here (a network fault): not probed."""
    # Explain's words for a program it ran (an explain report's status, never a record of the store's):
    COMPILED_NOTHING = "compiled-nothing"
    """The program ended before it compiled anything: there is no HLO to explain."""
    PARTIAL = "partial"
    """The program compiled something, then failed or ran out of time: what compiled before it ended counts."""


class Verdict(Word):
    """What a check that ran found: the bug is there, it is not, or this release cannot tell."""

    AFFECTED = "affected"
    UNAFFECTED = "unaffected"
    INCONCLUSIVE = "inconclusive"

    @property
    def conclusive(self) -> bool:
        return self is not Verdict.INCONCLUSIVE


class Source(Word):
    """Where a bisect's observation of one release or commit came from."""

    RUN = "run"
    """Run by this bisect."""
    RECORD = "record"
    """Read from a record of an earlier run (a matrix cell)."""
    CACHE = "cache"
    """Read from the probe cache (an earlier bisect ran it)."""
    INDEX = "index"
    """Decided from the package index's metadata alone (not installable), nothing ran."""
    TRIAGE = "triage"
    """A run triage made before the bisect, judged by the check's own judge (kit/bisect/probe/given.py)."""
    RELEASE = "release"
    """A commit search's end answered by the release's own probe (the same Python as the release's tag)."""


_NOT_IN_RECORDS = (Status.YANKED, Status.UNREACHABLE, Status.COMPILED_NOTHING, Status.PARTIAL)
STATUSES = tuple(status for status in Status if status not in _NOT_IN_RECORDS)
"""A record's ``status`` is one of these."""
EXPLAIN_STATUSES = (Status.RAN, Status.PARTIAL, Status.COMPILED_NOTHING, Status.NOT_INSTALLABLE)
"""An explain report's ``status`` (``reports/explain-*.json``) is one of these."""
VERDICTS = (*Verdict, None)
"""A record's ``verdict`` is one of these; None where nothing was judged (the run did not finish)."""


def sources(joined: str) -> tuple[Source, ...]:
    """The sources of an observation told in several steps (``record+run``: a record, then a re-run)."""
    return tuple(member for member in (Source.of(part) for part in joined.split("+")) if member is not None)


def joined(steps: Iterable[object]) -> str:
    """The one word for an observation made in these steps, in order, each once (the inverse of `sources`)."""
    return "+".join(dict.fromkeys(str(step) for step in steps))
