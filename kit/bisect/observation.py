"""What one release did, in four parts: what was found, where it came from, what it cost, what was installed.

A probe's answer travels from the prober to the report as one
:class:`Observation`. Its parts change for different reasons (a re-run
settles what was *found*; the probe cache changes where it *came from*; a
cluster job adds to its *cost*), so each is its own frozen value and a
change names the part it touches::

    observation.with_came_from(source=Source.CACHE, matched=...)

On disk (a probe-cache entry, a cluster job's file, a bisect's JSON report)
an observation is one object per part. Files written before the split hold
one flat object; :meth:`Observation.from_json` reads both. A status and a
source are enums (`kit.records.Status`, `kit.records.Source`) from where they
are made: a word read from a file becomes its member there, and a word no
member has is refused there, naming the field.
"""

from __future__ import annotations

from dataclasses import MISSING, asdict, dataclass, field, fields, replace
from typing import TYPE_CHECKING, Callable, Mapping, TypedDict, cast

from ..records import Source, Status, joined, sources
from ..requirements import versions_text
from ..json_types import JsonObject

if TYPE_CHECKING:
    from typing import Unpack  # 3.11: only the checker reads it


@dataclass(frozen=True)
class Found:
    """What the probe found: the record's status and verdict, and how a failure ended."""

    status: Status
    """``ran``, ``not-installable``, ``crashed`` or ``timed-out``, as in a record; or ``yanked`` (not probed)."""
    verdict: str | None
    """``affected``, ``unaffected`` or ``inconclusive`` (a script's 125 too); None when it did not run."""
    reason: str
    runs: list[str] = field(default_factory=list)
    """Each run's verdict or status, in order, when there was more than one."""
    flipped: bool = False
    samples: list[float] = field(default_factory=list)
    """``--metric``: every sample measured for this release (a metric's verdict is its step decision)."""
    exception: str | None = None
    """The exception that ended the script (``TypeError: ...``), where it died of one."""
    missing_import: str | None = None
    """A package the script could not import and the environment lacks: add it to requires."""
    jax_cannot_run: str | None = None
    """What JAX itself died of where it was asked to import and run (`kit.run.jax_runs`): the run was no
    verdict, the probe is a skip, and it is never kept in the probe cache as an outcome."""
    kit_files_changed: bool = False
    """The kit's own files changed while it ran (`kit.run.kit_files`): no verdict, never kept in the probe cache."""

    def __post_init__(self) -> None:
        # A status given as its word (a record's, a file's) becomes its member here, once; an unknown word is refused.
        object.__setattr__(self, "status", Status(self.status))


@dataclass(frozen=True)
class CameFrom:
    """Where the answer came from: which run, or why an earlier one counts as this one."""

    source: Source = Source.RUN
    """What the answer rests on: ``run`` (measured by this bisect), ``record`` (a current record), ``cache`` (an
    earlier bisect's probe), ``triage`` (a run triage made, judged by the check's judge: kit/bisect/probe/given.py),
    ``index`` or ``release``. Given as a word of several steps (``record+run``), the last step."""
    earlier: tuple[Source, ...] = ()
    """Steps before ``source`` that did not settle it (an inconclusive record, then a run: ``(record,)``)."""
    ran_at: str = ""
    """When it ran (UTC, ISO 8601)."""
    by: str = ""
    """The bisect that ran it."""
    job: str = ""
    """The SLURM job that ran it (``SLURM job 12_0 on node01``), or "" for a local run."""
    log: str = ""
    """Its whole output, as a path relative to the project (beside its probe file)."""
    output_tail: list[str] = field(default_factory=list)
    """The last lines of its output, bounded."""
    matched: str = ""
    """Answered without a run: why the earlier probe or record counts as this one (what their identity holds)."""
    not_reused: str = ""
    """Run although an earlier probe of the same release exists: what differed."""
    taken_from: str = ""
    """Answered by a run this bisect was handed (``source`` ``triage``): what ran where, how it was judged, and how
    to reproduce it, in words; "" for any other observation."""

    def __post_init__(self) -> None:
        # One word of several steps (``record+run``, as files and `joined` write it) is split here, once.
        steps = (*self.earlier, *sources(self.source)) if "+" in self.source else (*self.earlier, Source(self.source))
        if not steps:
            raise ValueError(f"no source in {self.source!r}")
        object.__setattr__(self, "source", steps[-1])
        object.__setattr__(self, "earlier", tuple(Source(step) for step in steps[:-1]))

    @property
    def steps(self) -> tuple[Source, ...]:
        """Every step the answer took, in order (``(record, run)``); the last is ``source``."""
        return (*self.earlier, self.source)

    @property
    def shown(self) -> str:
        """The steps as one word, as probe lines and files say them (``record+run``)."""
        return joined(self.steps)


@dataclass(frozen=True)
class Cost:
    """What the probe cost, and the limit it ran under."""

    seconds: float = 0.0
    """Wall time of the probe, environment included."""
    timeout_s: int | None = None
    """The time limit it ran under: a timeout is only as final as its limit."""
    compiles: str = ""
    """How many of the run's compiles JAX's persistent cache answered (``compile cache: 30 of 33 compiles
    reused``), or why it was not used; "" where the run does not say (a script, an older record)."""


@dataclass(frozen=True)
class Installed:
    """What it ran with: the probe cache's key, and every package the report's "what else changed" compares."""

    python: str | None = None
    jaxlib: str | None = None
    environment: str | None = None
    """``built`` or ``reused`` when this probe prepared the release's environment; None when it did not."""
    packages: dict[str, str] = field(default_factory=dict)
    """Every package installed where it ran."""
    era: str | None = None
    """The era cut-off its dependencies were resolved at (uploaded no later than this)."""
    pins: list[str] = field(default_factory=list)
    """``--pin`` requirements held while it ran."""
    extra_packages: dict[str, str | None] = field(default_factory=dict)
    """The version of each extra package (a check's ``requires``, ``--requires``) it ran with."""


class FoundChanges(TypedDict, total=False):
    """Fields of `Found` a change may name (`Observation.with_found`); tests/test_bisect_observation.py keeps
    each of these four in step with its dataclass."""

    status: Status
    verdict: str | None
    reason: str
    runs: list[str]
    flipped: bool
    samples: list[float]
    exception: str | None
    missing_import: str | None
    jax_cannot_run: str | None
    kit_files_changed: bool


class CameFromChanges(TypedDict, total=False):
    source: Source
    earlier: tuple[Source, ...]
    ran_at: str
    by: str
    job: str
    log: str
    output_tail: list[str]
    matched: str
    not_reused: str
    taken_from: str


class CostChanges(TypedDict, total=False):
    seconds: float
    timeout_s: int | None
    compiles: str


class InstalledChanges(TypedDict, total=False):
    python: str | None
    jaxlib: str | None
    environment: str | None
    packages: dict[str, str]
    era: str | None
    pins: list[str]
    extra_packages: dict[str, str | None]


@dataclass(frozen=True)
class Observation:
    """What one release did, before it is mapped to an outcome."""

    found: Found
    came_from: CameFrom = field(default_factory=CameFrom)
    cost: Cost = field(default_factory=Cost)
    installed: Installed = field(default_factory=Installed)

    # One change names the part it touches: ``seen.with_came_from(source=Source.CACHE)``.
    def with_found(self, **changes: Unpack[FoundChanges]) -> Observation:
        return replace(self, found=replace(self.found, **changes))

    def with_came_from(self, **changes: Unpack[CameFromChanges]) -> Observation:
        if "source" in changes:  # a new source is the whole story of where it came from (a cache's answer: cache)
            changes.setdefault("earlier", ())
        return replace(self, came_from=replace(self.came_from, **changes))

    def with_cost(self, **changes: Unpack[CostChanges]) -> Observation:
        return replace(self, cost=replace(self.cost, **changes))

    def with_installed(self, **changes: Unpack[InstalledChanges]) -> Observation:
        return replace(self, installed=replace(self.installed, **changes))

    @property
    def details(self) -> str:
        """What the probe line adds after the reason: the extra packages' versions (``flax 0.10.1``), and how
        many compiles were reused."""
        return " · ".join(filter(None, [versions_text(self.installed.extra_packages), self.cost.compiles]))

    def to_json(self) -> JsonObject:
        came_from = asdict(self.came_from)
        came_from.pop("earlier")
        came_from["source"] = self.came_from.shown  # one word, as files before the enum held it
        return {"found": asdict(self.found), "came_from": came_from, "cost": asdict(self.cost),
                "installed": asdict(self.installed)}

    @classmethod
    def from_json(cls, data: object) -> Observation:
        """Read back a saved observation, in parts or in the flat form of files written before the split; keys
        this kit does not know are dropped.

        A file anyone can edit: ValueError names the first field of the wrong shape.
        """
        if not isinstance(data, Mapping):
            raise ValueError("the observation is not a JSON object")
        nested = "found" in data

        def part(name: str) -> JsonObject:
            given = data.get(name, {}) if nested else data
            if not isinstance(given, Mapping):
                raise ValueError(f"the observation's {name!r} is not a JSON object")
            return _checked(_PARTS[name], given)

        # Each field was checked against its declared type (`_checked`): the casts say what that check proved.
        return cls(Found(**cast(FoundChanges, part("found"))), CameFrom(**cast(CameFromChanges, part("came_from"))),
                   Cost(**cast(CostChanges, part("cost"))), Installed(**cast(InstalledChanges, part("installed"))))


_PARTS: dict[str, type] = {"found": Found, "came_from": CameFrom, "cost": Cost, "installed": Installed}
def _checked(kind: type, data: Mapping[str, object]) -> JsonObject:
    """The fields of part ``kind`` that ``data`` holds, each checked against its declared type (others dropped)."""
    given: JsonObject = {}
    for known in fields(kind):
        if known.name not in data:
            continue
        fits = _SHAPES[str(known.type)]
        if not fits(data[known.name]):
            raise ValueError(f"the observation's {known.name!r} is not {known.type}")
        given[known.name] = data[known.name]
    missing = [f.name for f in fields(kind) if f.name not in given and f.default is MISSING
               and f.default_factory is MISSING]
    if missing:  # a required field (status, verdict, reason)
        raise ValueError(f"the observation has no {missing[0]!r}")
    return given


def _number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _text_or_none(value: object) -> bool:
    return value is None or isinstance(value, str)


def _list_of(fits: Callable[[object], bool]) -> Callable[[object], bool]:
    return lambda value: isinstance(value, list) and all(fits(x) for x in value)


def _mapping_to(fits: Callable[[object], bool]) -> Callable[[object], bool]:
    return lambda value: isinstance(value, dict) and all(isinstance(k, str) and fits(x) for k, x in value.items())


# What each declared field type accepts from JSON: the shape follows the declaration, so a new field of a known
# type needs no entry (test_observation's test fails a field whose type is not here).
_SHAPES: dict[str, Callable[[object], bool]] = {
    "str": lambda v: isinstance(v, str),
    "Status": lambda v: isinstance(v, str) and Status.of(v) is not None,
    "Source": lambda v: isinstance(v, str) and all(Source.of(step) is not None for step in v.split("+")),
    "tuple[Source, ...]": _list_of(lambda v: isinstance(v, str) and Source.of(v) is not None),
    "str | None": _text_or_none,
    "bool": lambda v: isinstance(v, bool),
    "float": _number,
    "int | None": lambda v: v is None or (isinstance(v, (int, float)) and not isinstance(v, bool) and int(v) == v),
    "list[str]": _list_of(lambda v: isinstance(v, str)),
    "list[float]": _list_of(_number),
    "dict[str, str]": _mapping_to(lambda v: isinstance(v, str)),
    "dict[str, str | None]": _mapping_to(_text_or_none),
}

