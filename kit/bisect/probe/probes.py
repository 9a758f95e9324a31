"""One probe: a *subject* (what is probed) judged by a *judge* (what its run counts as).

cargo-bisect-rustc's toolchain × its ``--regress`` test, asv's environment ×
benchmark. The subject says how a candidate is prepared, what identity its
probe has and where its records go: a release
(:class:`~kit.bisect.probe.release_subject.ReleaseSubject`) or a commit laid over a
built release (:class:`~kit.bisect.commits.probes.CommitSubject`). The judge
says how its run is read: by verdict or exit code, remembered in the probe
cache (:class:`~kit.bisect.probe.judges.VerdictJudge`), or by a metric against the
bounds' baseline (:class:`~kit.bisect.probe.metric.MetricJudge`). A new kind of
probe is a new subject or judge, never a subclass of another.

The :class:`Prober` composes them for the search: a candidate the index's
metadata rules out (yanked, no wheels here) is answered from it alone, any
other goes to the judge, and :func:`~kit.bisect.outcomes.classify` says what
the observation counts as.
"""

from __future__ import annotations

from pathlib import Path
from typing import Generic, Mapping, NamedTuple, Protocol, TypeVar

from ...log_events import Event, Kind
from ...records import Source, Status
from ...errors import ArchiveUnreachable
from ...install import Prepared
from ...log_events import Log
from ...records import Identity, Record
from ..bounds import Bounds
from ..candidates import Candidate
from ..observation import CameFrom, Found, Installed, Observation
from ..outcomes import classify
from ..search import ProbeOutcome
from .metric_summary import MetricSummary


class Look(NamedTuple):
    """A judge's answer: the observation, and whether it was measured now (not known before)."""

    observation: Observation
    ran_now: bool


class Subject(Protocol):
    """What is probed: how a candidate is prepared, its identity, where its records go."""

    candidates: dict[str, Candidate]

    @property
    def timeout(self) -> int: ...

    def name_of(self, key: str) -> str: ...

    def prepare(self, key: str) -> Prepared: ...

    def environment_state(self, key: str) -> str | None: ...

    def resolved(self, key: str) -> tuple[str | None, str | None]: ...

    def identity(self, key: str, prepared: Prepared) -> Identity: ...

    def locked_identity(self, key: str) -> Identity | None: ...

    def recorded(self, here: Identity, key: str) -> Observation | None: ...

    def run(self, key: str, prepared: Prepared, log_file: Path | None = None) -> Record: ...

    def done(self, key: str) -> None: ...

    def close(self) -> None: ...


class Judge(Protocol):
    """How a probe's run counts: what it observed, what is remembered, and its log line."""

    name: str
    """The bisect's name, which each observation it makes carries (``by``)."""

    def start(self, subject: Subject, bounds: Bounds) -> dict[str, Look]: ...

    def observe(self, subject: Subject, candidate: Candidate) -> Look: ...

    def remembered(self, subject: Subject, key: str) -> Observation | None: ...

    def line(self, name: str, observation: Observation, result: ProbeOutcome) -> str: ...

    def summary(self, observations: Mapping[str, Observation]) -> MetricSummary | None: ...


S = TypeVar("S", bound=Subject)


class Prober(Generic[S]):
    """Turns a candidate into an outcome; remembers every observation it made or found."""

    def __init__(self, subject: S, judge: Judge, crash: str, log: Log) -> None:
        self.subject, self.judge, self.crash, self.log = subject, judge, crash, log
        """``crash``: how a crashed or timed-out probe counts (``--crash``; `kit.bisect.outcomes.CRASH_MODES`)."""
        self.observations: dict[str, Observation] = {}
        self.fold_index = False
        """Probes the index answers (nothing ran) are details: the commit search says how many and why in one line."""
        self.ran_now: list[str] = []
        """Candidates this bisect ran (not found in the cache or the records)."""

    @property
    def name(self) -> str:
        """The bisect's name: the judge's, so that what it observes says which bisect made it."""
        return self.judge.name

    @name.setter
    def name(self, name: str) -> None:  # a gallop names the bisect once it has found the other bound
        self.judge.name = name

    @property
    def candidates(self) -> dict[str, Candidate]:
        return self.subject.candidates

    def name_of(self, key: str) -> str:
        """How a log line names what is probed: ``jax 0.5.3``, or a commit and its build."""
        return self.subject.name_of(key)

    def __call__(self, key: str) -> ProbeOutcome:
        return self.record(key, self.observe(key))

    def record(self, key: str, observation: Observation, ran_now: bool = False) -> ProbeOutcome:
        """An observation of ``key`` made anywhere (here, on a SLURM node): kept, counted and said, its outcome.

        Every outcome of a bisect is recorded here, so the report's observations, the
        runs made now and the probe lines cannot disagree with what the search was told.
        """
        self.observations[key] = observation
        if ran_now:
            self.ran_now.append(key)
        result = self.classify(observation)
        folded = self.fold_index and observation.came_from.source == Source.INDEX
        self.log(Event(self.judge.line(self.name_of(key), observation, result), Kind.DETAIL if folded else Kind.PROBE))
        return result

    def remember(self, key: str, observation: Observation) -> ProbeOutcome:
        """An observation known before the search (an earlier probe, the index): kept, not said; its outcome."""
        self.observations[key] = observation
        return self.classify(observation)

    def classify(self, observation: Observation) -> ProbeOutcome:
        """The search's outcome of ``observation`` under this bisect's ``--crash`` (`kit.bisect.outcomes.classify`)."""
        return classify(observation, self.crash)

    def outcomes(self) -> dict[str, ProbeOutcome]:
        """The outcome of every observation recorded so far (a report of a search that stopped early)."""
        return {key: self.classify(observation) for key, observation in self.observations.items()}

    def observe(self, key: str) -> Observation:
        """What the candidate does: from the index's metadata alone, or as the judge finds it."""
        candidate = self.subject.candidates[key]
        ruled = ruled_out_by_index(candidate)
        if ruled is not None:
            return ruled
        try:
            observation, ran_now = self.judge.observe(self.subject, candidate)
        finally:
            self.subject.done(key)  # e.g. a commit's overlay goes: hundreds would fill a disk
        if ran_now:
            self.ran_now.append(key)
        return observation

    def start(self, bounds: Bounds, cache: dict[str, ProbeOutcome]) -> None:
        """What the judge must know before the search (a metric's baseline); what that measured is kept, and its
        outcome (classified as every other) handed to the search's ``cache``."""
        for key, (observation, ran_now) in self.judge.start(self.subject, bounds).items():
            cache[key] = self.remember(key, observation)
            if ran_now:
                self.ran_now.append(key)

    def remembered(self, key: str) -> Observation | None:
        """An earlier probe's answer for ``key`` that the judge accepts without a run (None: run it)."""
        return self.judge.remembered(self.subject, key)

    def known_outcomes(self) -> dict[str, ProbeOutcome]:
        """What is already known about these candidates, as the search's starting cache.

        Handed to the search before it starts, so it narrows straight to the
        known change instead of picking midpoints it would then have to run.
        Only candidates whose environment was built here can be known this way
        (their lock says what they install); the others are asked when probed.
        """
        known: dict[str, ProbeOutcome] = {}
        for candidate in self.subject.candidates.values():
            if ruled_out_by_index(candidate) is not None:
                continue
            remembered = self.remembered(candidate.version)
            if remembered is not None:
                known[candidate.version] = self.remember(candidate.version, remembered)
        return known

    def ruled_out(self) -> dict[str, ProbeOutcome]:
        """The candidates the index's metadata already rules out (yanked, or no wheels here): skips, known at once.

        Handed to the search too, so a round of ``--jobs K`` never spends a
        place on a release that needs no probe.
        """
        ruled: dict[str, ProbeOutcome] = {}
        for candidate in self.subject.candidates.values():
            observation = ruled_out_by_index(candidate)
            if observation is not None:
                ruled[candidate.version] = self.remember(candidate.version, observation)
        return ruled

    def summary(self) -> MetricSummary | None:
        """What the judge adds to the report (a metric's baseline and medians); None for a verdict."""
        return self.judge.summary(self.observations)


def ruled_out_by_index(candidate: Candidate) -> Observation | None:
    """A yanked release, or one with no wheels here: answered from the index's metadata, never probed."""
    if candidate.yanked is not None:
        return Observation(Found(Status.YANKED, None, f"yanked from the index ({candidate.yanked}): not probed"),
                           CameFrom(Source.INDEX))
    if candidate.problem:
        return Observation(Found(Status.NOT_INSTALLABLE, None, f"not installable here: {candidate.problem}"),
                           CameFrom(Source.INDEX), installed=Installed(jaxlib=candidate.jaxlib))
    return None


def install_unknown(unknown: ArchiveUnreachable, candidate: Candidate) -> Observation:
    """A release whose jaxlib only an unreachable archive might hold: skipped, named, never kept as a fact."""
    return Observation(Found(Status.UNREACHABLE, None, f"installability unknown here: {unknown}"), CameFrom(Source.INDEX),
                       installed=Installed(jaxlib=candidate.jaxlib))
