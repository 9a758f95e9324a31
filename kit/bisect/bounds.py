"""The two ends of a search as one value: good and bad, where they came from, which way the search runs.

Like cargo-bisect-rustc's ``bounds.rs``: the ends are parsed and ordered once,
where the search gets them (the command line, a gallop from one of them, or
:meth:`Bounds.from_records`), and everything downstream (the search's
direction, the report's "hunting a fix", which flag a failing end was) asks
this value instead of comparing version strings again. ``--good`` and
``--bad`` stay in :class:`~kit.bisect.specs.HowToSearch` as the user gave them
(one may be missing: :mod:`kit.bisect.gallop` finds the other); the bounds
are what the search then runs between, made once in the driver.
"""

from __future__ import annotations

from dataclasses import dataclass

from packaging.version import Version

from ..records import Verdict
from ..config import Matrix
from ..errors import UsageError
from ..config import configured_parameters
from ..records import newest_records_here
from .specs import HowToSearch, WhatRuns
from .search import ProbeOutcome

COMMAND_LINE = "command line"
RECORDS = "records"
GALLOP = "gallop"


@dataclass(frozen=True)
class Bounds:
    """Good (the bug does not show) and bad (it does); ``fix`` when bad is the older end."""

    good: str
    bad: str
    fix: bool
    """True when hunting a fix (bad is older), False for a regression (good is older)."""
    source: str = COMMAND_LINE
    """Where they came from: ``command line``, ``gallop`` (one given, the other found) or ``records``."""
    how: str = ""
    """One sentence saying how they were chosen, for the log and the report."""

    @classmethod
    def of_releases(cls, good: str, bad: str, source: str = COMMAND_LINE, how: str = "") -> Bounds:
        """Two release numbers (already checked as such); the direction from their order, decided here once."""
        how = how or f"bounds from the command line: good {good}, bad {bad}"
        return cls(good, bad, Version(bad) < Version(good), source, how)

    @classmethod
    def given(cls, search: HowToSearch) -> Bounds:
        """Both ends from the command line."""
        assert search.good is not None and search.bad is not None, "both --good and --bad"
        return cls.of_releases(search.good, search.bad)

    @classmethod
    def from_records(cls, matrix: Matrix, runs: WhatRuns) -> Bounds:
        """The ends from this machine's newest records of the check.

        Takes the newest release on each side and narrows the other end to the
        nearest release across the change, so the range is as short as the
        records allow.
        """
        check, backend = runs.check, runs.backend
        if not check:
            raise UsageError("a script has no recorded matrix to take bounds from", "pass --good and --bad")
        verdicts = recorded_verdicts(matrix, runs)
        affected = sorted((v for v, verdict in verdicts.items() if verdict == Verdict.AFFECTED), key=Version)
        unaffected = sorted((v for v, verdict in verdicts.items() if verdict == Verdict.UNAFFECTED), key=Version)
        if not affected or not unaffected:
            raise UsageError(
                f"the records in {matrix.results_dir} do not hold both an affected and an unaffected "
                f"{check} run on this machine ({backend})",
                f"pass --good and --bad, or run e.g. nox -s {check}-0.4.35 and nox -s {check}-0.6.0 first",
            )
        newest_bad, newest_good = affected[-1], unaffected[-1]
        if Version(newest_bad) < Version(newest_good):  # a fix: bad is older
            good, bad = next(v for v in unaffected if Version(v) > Version(newest_bad)), newest_bad
        else:  # a regression: good is older
            good, bad = newest_good, next(v for v in affected if Version(v) > Version(newest_good))
        how = (f"bounds from the records in {matrix.results_dir}: newest affected release {newest_bad}, "
               f"newest unaffected {newest_good}; searching between bad {bad} and good {good}")
        return cls.of_releases(good, bad, RECORDS, how)

    @property
    def regression(self) -> bool:
        """True when hunting a regression: the good end is the older one."""
        return not self.fix

    @property
    def old_outcome(self) -> ProbeOutcome:
        """What the older end is: the outcome the search walks away from."""
        return ProbeOutcome.BAD if self.fix else ProbeOutcome.GOOD

    @property
    def older(self) -> str:
        """The older end (bad for a fix, good for a regression)."""
        return self.bad if self.fix else self.good

    def flag(self, end: str) -> str:
        """The command-line flag that names ``end``: ``--good`` or ``--bad``."""
        return "--good" if end == self.good else "--bad"

    def other(self, end: str) -> str:
        """The end that is not ``end``."""
        return self.bad if end == self.good else self.good



def recorded_verdicts(matrix: Matrix, runs: WhatRuns) -> dict[str, str]:
    """Per release, the verdict of this machine's newest record of the check's matrix.toml parameters."""
    assert runs.check is not None
    newest = newest_records_here(matrix.results_dir, runs.backend, {runs.check: configured_parameters(matrix, runs.check)})
    return {jax: str(record.verdict) for (check, jax), record in newest.items() if check == runs.check and record.ran}
