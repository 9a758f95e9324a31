"""The matrix model: what the records say, per release, backend and machine.

Built from records alone (no installs, no JAX): the answer users ask for
("which release can I use?"), the measured range of each known problem, one
row per (release, backend, machine) with what each check found there, one row
per named ``[[environment]]`` (a user's own installation, under the releases:
its records count there and never in the answer), and the records superseded
or skipped. `kit.matrix.rows` builds the rows, `kit.matrix.markdown` renders
the model and `kit.matrix.report` writes it.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
from dataclasses import asdict, dataclass, field
from datetime import datetime
from pathlib import Path

from packaging.version import Version

from ..records import Status, Verdict
from .. import __version__ as KIT_VERSION
from .known_problems import KnownProblem, load_known_problems
from .metric_series import MetricSeries, metric_series
from ..records import (
    Record,
    Configured,
    LoadedRecord,
    UnusableFile,
    cell_key,
    created_at,
    environment_name,
    newest_per_environment,
    newest_per_cell,
    record_backend,
    record_jax,
    record_machine,
    release_key,
    split_ad_hoc,
)
from .measured import measuring_checks
from ..checks import builtin, check_order
from .rows import Row, Shown, environment_rows, host_name, record_environment, release_rows
from .workarounds import shard_map_figures, shard_map_text
from .target_rows import TargetAnswer, TargetCell, target_answers, target_cells

SCHEMA = 1
"""Version of matrix.json's layout; bump it when a key changes meaning or goes away."""

# --------------------------------------------------------------------------
# The report's data


@dataclass
class BackendAnswer:
    backend: str
    checks: list[str]
    lowest_passing: str | None
    releases_measured: list[str]
    not_passing_above: list[str]
    """Releases above `lowest_passing` that were measured and did not pass, with why."""
    newest_passing: str | None = None
    """The newest measured release that passes every check: what to pick when upgrading."""
    newest_blocked: list[str] = field(default_factory=list)
    """When none passes: why the newest measured release does not (its cells without a pass, checks it lacks)."""
    uncounted: list[str] = field(default_factory=list)
    """Checks with no verdict on any release here (every cell crashed, timed out, ...): left out of the count,
    each with its cells' statuses, so that one crashed cell of a user check never reads as every release failing."""


@dataclass
class AffectedRange:
    backend: str
    first_affected: str | None
    last_affected: str | None
    affected: list[str]
    unaffected_inside: list[str]
    first_unaffected_above: str | None
    inconclusive: list[str]
    releases_measured: list[str]
    workaround: str = ""
    """What the affected releases' own records show avoids the problem, with the figures ("" if nothing)."""


@dataclass
class KnownProblemAnswer:
    key: str
    check: str
    title: str
    links: list[str]
    upstream_fixed_in: str
    upstream_change: str
    ranges: list[AffectedRange]
    shows_on: list[str] = field(default_factory=lambda: ["cpu", "gpu"])


@dataclass
class ListedRecord:
    """A record the report lists outside the matrix (superseded by a newer one of its cell)."""

    check: str
    release: str
    backend: str
    machine: str
    created: str
    status: str
    verdict: str | None
    file: str


@dataclass
class AdHocRun(ListedRecord):
    """A record of parameters other than the matrix's: kept and listed, never in the answer."""

    differs: str = ""
    """How it differs from the matrix's parameters, as flags (``--devices 1 --repeats 1``)."""


@dataclass
class Machine:
    machine: str
    hosts: list[str]
    cpu_models: list[str]
    devices: list[str]


@dataclass
class PlotRef:
    title: str
    path: str


@dataclass
class Report:
    backends: list[BackendAnswer]
    known_problems: list[KnownProblemAnswer]
    rows: list[Row]
    checks: list[str]
    older: list[ListedRecord]
    ad_hoc: list[AdHocRun]
    unusable_files: list[dict[str, str]]
    machines: list[Machine]
    not_measured: list[str]
    record_count: int
    plots: list[PlotRef] = field(default_factory=list)
    plot_notes: list[str] = field(default_factory=list)
    metrics: list[MetricSeries] = field(default_factory=list)
    """Per check, metric and backend: each release's median and spread (kit.matrix.metric_series)."""
    environment_rows: list[Row] = field(default_factory=list)
    """One row per named environment (and backend, machine), shown under the releases; never in the answer."""
    measured_only: list[str] = field(default_factory=list)
    """Checks that report metrics but never a verdict of their own (kit.matrix.measured): not in the answer."""
    targets: list[TargetCell] = field(default_factory=list)
    """Records compiled for a chip this machine lacks (``--target``), newest per target, check and release."""
    target_answers: list[TargetAnswer] = field(default_factory=list)
    catalogue: list[dict[str, object]] = field(default_factory=list)
    """The catalogue of known problems (``known/``), each with the ranges the kit measured (kit.known.listing)."""

    def to_json(self) -> dict[str, object]:
        """matrix.json's content (the JSON edge)."""
        data = asdict(self)
        data["kit_version"] = KIT_VERSION
        data["schema"] = SCHEMA
        return data


# --------------------------------------------------------------------------
# Building


def _sorted_releases(releases: Iterable[str]) -> list[str]:
    return sorted(set(releases), key=release_key)


def _as_entries(records: Iterable[LoadedRecord | Record]) -> list[LoadedRecord]:
    entries = []
    for item in records:
        if isinstance(item, LoadedRecord):
            entries.append(item)
        else:
            entries.append(LoadedRecord(Path(str(item.get("_path", ""))), Record.of(item)))
    return entries


def build_report(
    records: Iterable[LoadedRecord | Record],
    matrix_releases: Sequence[str] | None = None,
    unusable: Sequence[UnusableFile] = (),
    configured: Configured | None = None,
    known_problems: Sequence[KnownProblem] | None = None,
    environments: Sequence[str] = (),
    sessions: Collection[str] | None = None,
    checks: Collection[str] | None = None,
) -> Report:
    """The whole report from records (`Record`s or `LoadedRecord`s) and the files that could not be used.

    ``known_problems`` default to the kit's own catalogue's entries that a matrix check measures.

    With ``configured``, only records of the matrix's own parameters make the
    answer and the rows; the others are listed as ad-hoc runs. Without it
    (tests, a results folder without a matrix), every record counts. Records of
    an existing interpreter never make the answer: those of the named
    ``environments`` (matrix.toml's ``[[environment]]``) make their rows, the
    others are ad-hoc runs. ``sessions`` (the nox sessions matrix.toml makes)
    turns a Reproduce command whose session does not exist into
    ``python -m kit run ...``. A check that only measures is shown as
    measured and kept out of the answer. With ``checks`` (matrix.toml's check
    names), records of any other check are listed as ad-hoc runs.
    """
    entries = _as_entries(records)
    in_matrix, ad_hoc = split_ad_hoc(entries, configured, environments, checks)
    named = [e for e in in_matrix if environment_name(e.record) is not None]
    in_matrix = [e for e in in_matrix if environment_name(e.record) is None]
    newest, older = newest_per_cell(in_matrix)
    newest_named, older_named = newest_per_environment(named)
    older += older_named
    current = list(newest.values())
    checks = sorted({cell_key(e.record).check for e in [*current, *newest_named.values()]}, key=check_order)
    measured = {record_jax(e.record) for e in in_matrix}
    measuring = measuring_checks(in_matrix)
    judged = [e for e in current if str(e.record.check) not in measuring]
    shown = Shown(sessions, measuring)
    return Report(
        backends=_backend_answers(judged),
        known_problems=[_known_problem_answer(p, judged)
                        for p in (load_known_problems() if known_problems is None else known_problems)],
        rows=release_rows(current, shown),
        checks=checks,
        older=[_listed(e) for e in sorted(older, key=lambda e: _sort_entry(e))],
        ad_hoc=[_ad_hoc(e, why) for e, why in sorted(ad_hoc, key=lambda item: _sort_entry(item[0]))],
        unusable_files=[{"file": str(p.path), "reason": p.reason} for p in unusable],
        machines=_machines(entries),
        not_measured=_sorted_releases(r for r in (matrix_releases or ()) if r not in measured),
        record_count=len(in_matrix) + len(named),
        metrics=metric_series(current),
        environment_rows=environment_rows(list(newest_named.values()), shown),
        measured_only=sorted(measuring, key=check_order),
        targets=(compiled := target_cells(e for e, _ in ad_hoc)),
        target_answers=target_answers(compiled, sorted(configured or {}, key=check_order)),
    )


def _ad_hoc(entry: LoadedRecord, differs: str) -> AdHocRun:
    return AdHocRun(**asdict(_listed(entry)), differs=differs)


def _sort_entry(entry: LoadedRecord) -> tuple[tuple[int, Version | str], str, str, str, datetime]:
    key = cell_key(entry.record)
    return (release_key(key.jax), key.backend, key.machine, key.check, created_at(entry.record))


def _passes(entry: LoadedRecord) -> bool:
    record = entry.record
    return record.ran and record.verdict == Verdict.UNAFFECTED


def _why_not(entry: LoadedRecord) -> str:
    record = entry.record
    check = record.check
    if record.status != Status.RAN:
        return f"{check} {record.status_text}"
    return f"{check} {record.verdict}"


def _backend_answers(current: list[LoadedRecord]) -> list[BackendAnswer]:
    answers = []
    for backend in sorted({cell_key(e.record).backend for e in current}):
        on_backend = [e for e in current if cell_key(e.record).backend == backend]
        checks = sorted({cell_key(e.record).check for e in on_backend if e.record.ran},
                        key=check_order)
        releases = _sorted_releases(cell_key(e.record).jax for e in on_backend)
        verdicts: dict[str, tuple[bool, list[str]]] = {}
        blocked: list[str] = []
        for release in releases:
            # Only the counted checks' cells decide: a check with no verdict anywhere says nothing of any release.
            here = [e for e in on_backend if cell_key(e.record).jax == release and cell_key(e.record).check in checks]
            why = sorted({_why_not(e) for e in here if not _passes(e)})
            missing = [c for c in checks if not any(cell_key(e.record).check == c for e in here)]
            verdicts[release] = (bool(checks) and not why and not missing, why)
            if release == releases[-1]:  # said when no release passes: what holds the newest back
                blocked = why + [f"no {c} record" for c in missing]
        lowest = next((r for r in releases if verdicts[r][0]), None)
        above: list[str] = []
        if lowest is not None:
            for release in releases[releases.index(lowest) + 1:]:
                ok, why = verdicts[release]
                failing = [w for w in why if Status.NOT_INSTALLABLE not in w]
                if not ok and failing:
                    above.append(f"{release} ({', '.join(failing)})")
        newest = next((r for r in reversed(releases) if verdicts[r][0]), None)
        answers.append(BackendAnswer(backend, checks, lowest, releases, above, newest, blocked if newest is None else [],
                                     _uncounted(on_backend, checks)))
    return answers


def _uncounted(on_backend: list[LoadedRecord], counted: list[str]) -> list[str]:
    """The checks left out of the count (no verdict on any release), each with what its cells were."""
    left_out = sorted({cell_key(e.record).check for e in on_backend} - set(counted), key=check_order)
    found = []
    for check in left_out:
        cells = [e for e in on_backend if cell_key(e.record).check == check]
        statuses = ", ".join(f"{e.record.status_text} on {cell_key(e.record).jax}"
                             for e in sorted(cells, key=lambda e: release_key(cell_key(e.record).jax)))
        found.append(f"{check} ({statuses})")
    return found


def _known_problem_answer(problem: KnownProblem, current: list[LoadedRecord]) -> KnownProblemAnswer:
    ranges = []
    ran = [e for e in current if e.record.check == problem.check and e.record.ran]
    for backend in sorted({cell_key(e.record).backend for e in ran}):
        by_release: dict[str, set[str]] = {}
        for e in ran:
            if cell_key(e.record).backend == backend:
                by_release.setdefault(record_jax(e.record), set()).add(str(e.record.verdict))
        releases = _sorted_releases(by_release)
        # object machine measuring the release as affected makes it affected.
        affected = [r for r in releases if Verdict.AFFECTED in by_release[r]]
        clean = [r for r in releases if by_release[r] == {Verdict.UNAFFECTED}]
        inconclusive = [r for r in releases if r not in affected and r not in clean]
        first = affected[0] if affected else None
        last = affected[-1] if affected else None
        inside: list[str] = []
        above = None
        if first is not None and last is not None:
            lo, hi = release_key(first), release_key(last)
            inside = [r for r in clean if lo < release_key(r) < hi]
            above = next((r for r in clean if release_key(r) > hi), None)
        affected_records = [e for e in ran if cell_key(e.record).backend == backend
                            and e.record.verdict == Verdict.AFFECTED]
        ranges.append(AffectedRange(backend, first, last, affected, inside, above, inconclusive, releases,
                                    _workaround(problem.check, affected_records)))
    return KnownProblemAnswer(
        key=problem.key,
        check=problem.check,
        title=problem.title,
        links=list(problem.links),
        upstream_fixed_in=problem.fix.release if problem.fix else "",
        upstream_change=f"{problem.fix.title} — {problem.fix.url}" if problem.fix else "",
        ranges=ranges,
        shows_on=list(problem.shows_on),
    )


def _workaround(check: str, affected: list[LoadedRecord]) -> str:
    """A workaround the affected records' own evidence supports, in words; "" when they show none."""
    builtin_check = builtin(check)
    if builtin_check is None or builtin_check.workaround != "shard_map":
        return ""
    figures = [f for e in sorted(affected, key=lambda e: release_key(record_jax(e.record)))
               if (f := shard_map_figures(record_jax(e.record), e.record.evidence)) is not None]
    return shard_map_text(figures)


def _listed(entry: LoadedRecord) -> ListedRecord:
    key = cell_key(entry.record)
    return ListedRecord(
        check=key.check,
        release=key.jax,
        backend=key.backend,
        machine=key.machine,
        created=str(entry.record.created or ""),
        status=str(entry.record.status),
        verdict=entry.record.verdict,
        file=entry.path.name,
    )


def _machines(entries: list[LoadedRecord]) -> list[Machine]:
    found: dict[str, Machine] = {}
    for entry in entries:
        record = entry.record
        env = record_environment(record)
        machine = found.setdefault(record_machine(record), Machine(record_machine(record), [], [], []))
        for target, value in (
            (machine.hosts, host_name(record)),
            (machine.cpu_models, str(env.get("cpu_model") or "")),
        ):
            if value and value not in target:
                target.append(value)
        if env.get("device_kind"):
            count = env.get("device_count")
            backend = record_backend(record)
            kind = str(env["device_kind"])
            device = backend if kind.lower() == backend else f"{backend} {kind}"
            device = f"{device} ×{count}" if count else device
            if device not in machine.devices:
                machine.devices.append(device)
    for machine in found.values():
        machine.hosts.sort()
        machine.cpu_models.sort()
        machine.devices.sort()
    return sorted(found.values(), key=lambda m: m.machine)

