"""The matrix's rows: one per release (and backend, machine), one per named environment, each check's finding.

A row is what the newest record of each check there says, in a few words
(`CellFinding`), and what those records say about where they ran. A named
``[[environment]]`` (a user's own installation) gets rows of its own, shown
under the releases, labelled with its name and the versions found there.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass, field

from ..records import Status
from ..records import LoadedRecord, Record, cell_key, environment_cell, existing_interpreter, record_jax, release_key
from ..checks import builtin, check_order
from .key_figures import failure_figure, key_figure, packages_figure, speedups
from .reproduce import working_command
from ..run.facts import job_label
from ..text_bounds import REASON_CHARS, cut
from ..json_types import as_list, as_object

@dataclass
class CellFinding:
    """What one check found in one row: its newest record there, in a few words."""

    check: str
    status: str
    verdict: str | None
    figure: str
    reason: str
    created: str
    reproduce: str
    file: str
    summary: Mapping[str, object] = field(default_factory=dict)
    """The record's summary figures (an open mapping: each check names its own), backfilled for older records."""
    ran_by: str = ""  # "SLURM job 12_1 on node01" for a record from a job array, else ""
    measured: bool = False
    """The check only measures (metrics, no verdict of its own): shown as measured, not in the answer."""


@dataclass(frozen=True)
class Shown:
    """How the records' cells are shown: which nox sessions exist, which checks only measure."""

    sessions: Collection[str] | None = None
    """The nox sessions matrix.toml makes (None: unknown): a Reproduce command whose session is gone is rewritten."""
    measuring: Collection[str] = ()
    """Checks that report metrics but no verdict of their own (kit.matrix.measured)."""


@dataclass
class Row:
    """One (release, backend, machine): what each check found there."""

    release: str
    backend: str
    machine: str
    host: str
    device_kind: str
    device_count: str
    python: str
    jaxlib: str
    install: str
    findings: dict[str, CellFinding]
    reproduce: list[str]
    environment: str = ""
    """The ``[[environment]]`` of a user's own installation; "" for a release the kit built."""
    versions: str = ""
    """An environment's versions as found there (``jax 0.4.35, jaxlib 0.4.35, numpy 2.1.3, scipy 1.14.1``)."""


def record_environment(record: Record) -> Mapping[str, object]:
    return record.environment


def host_name(record: Record) -> str:
    host = record.host
    env = record_environment(record)
    return str(host.get("name") or env.get("host") or env.get("hostname") or "")


def release_rows(current: list[LoadedRecord], shown: Shown = Shown()) -> list[Row]:
    """One row per (release, backend, machine) of the newest records, releases in order."""
    groups: dict[tuple[str, str, str], list[LoadedRecord]] = {}
    for entry in current:
        key = cell_key(entry.record)
        groups.setdefault((key.jax, key.backend, key.machine), []).append(entry)
    return [_row(release, backend, machine, group, shown) for (release, backend, machine), group in sorted(
        groups.items(), key=lambda item: (release_key(item[0][0]), item[0][1], item[0][2]))]


# The packages an environment's row names, in this order (what every check may import).
_ROW_PACKAGES = ("jax", "jaxlib", "numpy", "scipy")


def environment_rows(current: list[LoadedRecord], shown: Shown = Shown()) -> list[Row]:
    """One row per named environment, backend and machine: what each check found there, and what it holds."""
    groups: dict[tuple[str, str, str], list[LoadedRecord]] = {}
    for entry in current:
        cell = environment_cell(entry.record)
        groups.setdefault((cell.environment, cell.backend, cell.machine), []).append(entry)
    rows = []
    for (name, backend, machine), group in sorted(groups.items()):
        releases = ", ".join(sorted({record_jax(e.record) for e in group}, key=release_key))
        row = _row(releases, backend, machine, group, shown)
        row.environment = name
        row.versions = _versions_found(group)
        row.install = f"existing: {existing_interpreter(group[0].record)}" if row.install == "ok" else row.install
        rows.append(row)
    return rows


def _versions_found(group: list[LoadedRecord]) -> str:
    """``jax 0.4.35, jaxlib 0.4.35, numpy 2.1.3, scipy 1.14.1``: what the environment's records found installed."""
    found: dict[str, set[str]] = {}
    for entry in group:
        packages = as_object(entry.record.install.get("packages"))
        for name in _ROW_PACKAGES:
            found.setdefault(name, set()).add(str(packages.get(name) or "absent"))
    return ", ".join(f"{name} {' / '.join(sorted(found[name]))}" for name in _ROW_PACKAGES if name in found)


def _row(release: str, backend: str, machine: str, group: list[LoadedRecord], shown: Shown) -> Row:
    """One row: the newest record of each check there, and what they say about the environment."""
    findings = {cell_key(e.record).check: finding(e, shown) for e in group}
    envs = [record_environment(e.record) for e in group]
    installs = [e.record.install for e in group]
    kinds = sorted({str(env["device_kind"]) for env in envs if env.get("device_kind")})
    counts = sorted({int(count) for count in (env.get("device_count") for env in envs) if isinstance(count, int)})
    pythons = sorted({str(env.get("python") or inst.get("python") or "") for env, inst in zip(envs, installs)} - {""})
    # A resolved-but-never-installed jaxlib would mislead; only runs count.
    jaxlibs = sorted(
        {
            str(env.get("jaxlib") or as_object(inst.get("resolved")).get("jaxlib") or "")
            for env, inst, e in zip(envs, installs, group)
            if e.record.status != Status.NOT_INSTALLABLE
        }
        - {""}
    )
    return Row(
        release=release,
        backend=backend,
        machine=machine,
        host=", ".join(sorted({host_name(e.record) for e in group} - {""})),
        device_kind=", ".join(kinds),
        device_count=", ".join(str(c) for c in counts),
        python=", ".join(pythons),
        jaxlib=", ".join(jaxlibs),
        install=_install_status(group),
        findings=findings,
        reproduce=[findings[c].reproduce for c in sorted(findings, key=check_order)],
    )


def _backfilled(check: str, summary: Mapping[str, object], evidence: object) -> Mapping[str, object]:
    """The summary with the keys a record from before them lacks, rebuilt from its detail where the check says how."""
    builtin_check = builtin(check)
    if builtin_check is None:
        return summary
    if builtin_check.summary_backfill is not None:
        summary = {**summary, **builtin_check.summary_backfill(summary, evidence)}
    if builtin_check.plot == "speedup" and not any(key.endswith(("_speedup_2", "_speedup_4")) for key in summary):
        summary = {**speedups(evidence), **summary}  # records from before the speedups were in the summary
    return summary


def _install_status(group: list[LoadedRecord]) -> str:
    reasons = sorted({str(e.record.reason or "no reason given")
                      for e in group if e.record.status == Status.NOT_INSTALLABLE})
    if not reasons:
        return "ok"
    neighbours = sorted({str(n) for e in group for n in as_list(e.record.install.get("neighbours"))},
                        key=release_key)
    if neighbours:
        reasons.append(f"installable neighbours: {', '.join(neighbours)}")
    if len(reasons) == len(group) or all(e.record.status == Status.NOT_INSTALLABLE for e in group):
        return "not installable: " + "; ".join(reasons)
    return "partly: " + "; ".join(reasons)


def finding(entry: LoadedRecord, shown: Shown = Shown()) -> CellFinding:
    """What one record says, as its cell shows it (with a Reproduce command that runs as written)."""
    record = entry.record
    check = str(record.check)
    evidence = record.evidence
    summary = evidence.get("summary") if isinstance(evidence, dict) else None
    summary = summary if isinstance(summary, dict) else {}
    status = str(record.status)
    summary = _backfilled(check, summary, evidence)
    figures = [key_figure(check, summary), failure_figure(evidence), packages_figure(record.environment)]
    figure = "; ".join(text for text in figures if text) if status == Status.RAN else ""
    return CellFinding(
        check=check,
        status=status,
        verdict=record.verdict,
        figure=figure,
        reason=cut(str(record.reason or ""), REASON_CHARS),  # records from before reasons were bounded
        created=str(record.created or ""),
        reproduce=working_command(record, shown.sessions),
        file=entry.path.name,
        summary=dict(summary),
        ran_by=job_label(record.slurm),
        measured=check in shown.measuring,
    )
