"""reports/matrix.md and reports/matrix.json, built from records alone.

No installs and no JAX: the report reads ``reports/results/`` and answers the
question users ask ("which release can I use?") before showing the evidence.
Every verdict in it comes from a record; the only upstream facts written
here are the known problems' links and the release their fix went into,
shown next to what the records measured so a disagreement is visible.

Run ``python -m kit.report [--results reports/results] [--out reports]``.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any


from . import __version__ as KIT_VERSION
from .records import (
    release_key,
    LoadedRecord,
    Problem,
    atomic_write_text,
    cell_key,
    created_at,
    load_records,
    newest_per_cell,
    record_backend,
    record_jax,
    record_machine,
)

# --------------------------------------------------------------------------
# Known problems (upstream facts, never verdicts)


@dataclass(frozen=True)
class UpstreamChange:
    """A change in JAX that fixed a problem, as cited in the report."""

    release: str
    title: str
    url: str
    commit: str
    verified: str
    related: tuple[str, ...] = ()


PARTITIONABLE_LINALG_CHANGE = UpstreamChange(
    release="0.5.3",
    title=(
        "Add and test support for partitioning of batch dimensions in lax.linalg "
        "(Dan Foreman-Mackey, 2025-02-27)"
    ),
    url="https://github.com/jax-ml/jax/commit/f93c2a1aa51d0d124bf0632eacbe95c261dacd57",
    commit="f93c2a1aa51d0d124bf0632eacbe95c261dacd57",
    verified=(
        "git history of jax-ml/jax: the commit is an ancestor of tag jax-v0.5.3 and not of "
        "jax-v0.5.2; it marks the LAPACK/cuSOLVER FFI custom calls batch-partitionable and adds "
        "tests/linalg_sharding_test.py. Not mentioned in CHANGELOG.md."
    ),
    related=(
        "https://github.com/jax-ml/jax/commit/c521bc62052e0ae760da2cffc376c6bf2c6f51f0 "
        "(XLA client mechanism for batch-partitionable FFI calls, first in 0.5.1)",
        "https://github.com/jax-ml/jax/commit/21884d4a14d364c3b82b312a668079c668cc2836 "
        "(registers the linalg custom calls through jax.ffi so GPU plugins get the "
        "partitioner too, first in 0.5.3)",
    ),
)

ISSUE_24843_FIX = UpstreamChange(
    release="0.4.36",
    title="Fix overflow error in GPU batched linear algebra kernels (2024-11-12)",
    url="https://github.com/jax-ml/jax/commit/21e98b5ce43dd1fda5d10fb7441bfdd011811095",
    commit="21e98b5ce43dd1fda5d10fb7441bfdd011811095",
    verified="CHANGELOG.md of jax-v0.4.36, 'Bug fixes', cites #24843.",
)


@dataclass(frozen=True)
class KnownProblem:
    key: str
    check: str
    title: str
    links: tuple[str, ...]
    fix: UpstreamChange
    # Where the bug shows; a clean result on another backend does not clear a release.
    shows_on: tuple[str, ...] = ("cpu", "gpu")


KNOWN_PROBLEMS: tuple[KnownProblem, ...] = (
    KnownProblem(
        key="sharded-slogdet-all-gather",
        check="scaling",
        title=(
            "Sharded slogdet does not scale: the batch is all-gathered before the LU "
            "custom call (linalg custom calls not batch-partitionable)"
        ),
        links=(PARTITIONABLE_LINALG_CHANGE.url,),
        fix=PARTITIONABLE_LINALG_CHANGE,
    ),
    KnownProblem(
        key="jax-24843",
        check="correctness",
        title="Wrong det/slogdet for large batches on GPU (JAX issue #24843)",
        links=("https://github.com/jax-ml/jax/issues/24843", ISSUE_24843_FIX.url),
        fix=ISSUE_24843_FIX,
        shows_on=("gpu",),
    ),
)

CHECK_ORDER = ("scaling", "correctness")


# --------------------------------------------------------------------------
# The report's data


@dataclass
class Cell:
    """One check's newest record in one row."""

    check: str
    status: str
    verdict: str | None
    figure: str
    reason: str
    created: str
    reproduce: str
    file: str
    summary: dict[str, Any] = field(default_factory=dict)


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
    cells: dict[str, Cell]
    reproduce: list[str]


@dataclass
class BackendAnswer:
    backend: str
    checks: list[str]
    lowest_passing: str | None
    releases_measured: list[str]
    not_passing_above: list[str]
    """Releases above `lowest_passing` that were measured and did not pass, with why."""


@dataclass
class ProblemRange:
    backend: str
    first_affected: str | None
    last_affected: str | None
    affected: list[str]
    unaffected_inside: list[str]
    first_unaffected_above: str | None
    inconclusive: list[str]
    releases_measured: list[str]


@dataclass
class ProblemAnswer:
    key: str
    check: str
    title: str
    links: list[str]
    upstream_fixed_in: str
    upstream_change: str
    ranges: list[ProblemRange]
    shows_on: list[str] = field(default_factory=lambda: ["cpu", "gpu"])


@dataclass
class OlderRecord:
    check: str
    release: str
    backend: str
    machine: str
    created: str
    status: str
    verdict: str | None
    file: str


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
    problems_known: list[ProblemAnswer]
    rows: list[Row]
    checks: list[str]
    older: list[OlderRecord]
    problems: list[dict[str, str]]
    machines: list[Machine]
    not_measured: list[str]
    record_count: int
    plots: list[PlotRef] = field(default_factory=list)
    plot_notes: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["kit_version"] = KIT_VERSION
        return data


# --------------------------------------------------------------------------
# Building


def _sorted_releases(releases: Iterable[str]) -> list[str]:
    return sorted(set(releases), key=release_key)


def _as_entries(records: Iterable[LoadedRecord | Mapping[str, Any]]) -> list[LoadedRecord]:
    entries = []
    for item in records:
        if isinstance(item, LoadedRecord):
            entries.append(item)
        else:
            entries.append(LoadedRecord(Path(str(item.get("_path", ""))), dict(item)))
    return entries


def build_report(
    records: Iterable[LoadedRecord | Mapping[str, Any]],
    matrix_releases: Sequence[str] | None = None,
    problems: Sequence[Problem] = (),
) -> Report:
    """The whole report from records (dicts or `LoadedRecord`s) and load problems."""
    entries = _as_entries(records)
    newest, older = newest_per_cell(entries)
    current = list(newest.values())
    checks = sorted(
        {cell_key(e.record).check for e in current},
        key=lambda c: (CHECK_ORDER.index(c) if c in CHECK_ORDER else len(CHECK_ORDER), c),
    )
    rows = _rows(current)
    measured = {record_jax(e.record) for e in entries}
    return Report(
        backends=_backend_answers(current),
        problems_known=[_problem_answer(p, current) for p in KNOWN_PROBLEMS],
        rows=rows,
        checks=checks,
        older=[_older(e) for e in sorted(older, key=lambda e: _sort_entry(e))],
        problems=[{"file": str(p.path), "reason": p.reason} for p in problems],
        machines=_machines(entries),
        not_measured=_sorted_releases(r for r in (matrix_releases or ()) if r not in measured),
        record_count=len(entries),
    )


def _sort_entry(entry: LoadedRecord) -> tuple[Any, ...]:
    key = cell_key(entry.record)
    return (release_key(key.jax), key.backend, key.machine, key.check, created_at(entry.record))


def _passes(entry: LoadedRecord) -> bool:
    record = entry.record
    return record.get("status") == "ran" and record.get("verdict") == "unaffected"


def _why_not(entry: LoadedRecord) -> str:
    record = entry.record
    check = record.get("check")
    if record.get("status") != "ran":
        return f"{check} {record.get('status')}"
    return f"{check} {record.get('verdict')}"


def _backend_answers(current: list[LoadedRecord]) -> list[BackendAnswer]:
    answers = []
    for backend in sorted({cell_key(e.record).backend for e in current}):
        on_backend = [e for e in current if cell_key(e.record).backend == backend]
        checks = sorted({cell_key(e.record).check for e in on_backend if e.record.get("status") == "ran"},
                        key=lambda c: (CHECK_ORDER.index(c) if c in CHECK_ORDER else 9, c))
        releases = _sorted_releases(cell_key(e.record).jax for e in on_backend)
        verdicts: dict[str, tuple[bool, list[str]]] = {}
        for release in releases:
            here = [e for e in on_backend if cell_key(e.record).jax == release]
            why = sorted({_why_not(e) for e in here if not _passes(e)})
            missing = [c for c in checks if not any(cell_key(e.record).check == c for e in here)]
            verdicts[release] = (bool(checks) and not why and not missing, why)
        lowest = next((r for r in releases if verdicts[r][0]), None)
        above: list[str] = []
        if lowest is not None:
            for release in releases[releases.index(lowest) + 1:]:
                ok, why = verdicts[release]
                failing = [w for w in why if "not-installable" not in w]
                if not ok and failing:
                    above.append(f"{release} ({', '.join(failing)})")
        answers.append(BackendAnswer(backend, checks, lowest, releases, above))
    return answers


def _problem_answer(problem: KnownProblem, current: list[LoadedRecord]) -> ProblemAnswer:
    ranges = []
    ran = [e for e in current if e.record.get("check") == problem.check and e.record.get("status") == "ran"]
    for backend in sorted({cell_key(e.record).backend for e in ran}):
        by_release: dict[str, set[str]] = {}
        for e in ran:
            if cell_key(e.record).backend == backend:
                by_release.setdefault(record_jax(e.record), set()).add(str(e.record.get("verdict")))
        releases = _sorted_releases(by_release)
        # Any machine measuring the release as affected makes it affected.
        affected = [r for r in releases if "affected" in by_release[r]]
        clean = [r for r in releases if by_release[r] == {"unaffected"}]
        inconclusive = [r for r in releases if r not in affected and r not in clean]
        first = affected[0] if affected else None
        last = affected[-1] if affected else None
        inside: list[str] = []
        above = None
        if first is not None and last is not None:
            lo, hi = release_key(first), release_key(last)
            inside = [r for r in clean if lo < release_key(r) < hi]
            above = next((r for r in clean if release_key(r) > hi), None)
        ranges.append(ProblemRange(backend, first, last, affected, inside, above, inconclusive, releases))
    return ProblemAnswer(
        key=problem.key,
        check=problem.check,
        title=problem.title,
        links=list(problem.links),
        upstream_fixed_in=problem.fix.release,
        upstream_change=f"{problem.fix.title} — {problem.fix.url}",
        ranges=ranges,
        shows_on=list(problem.shows_on),
    )


def _environment(record: Mapping[str, Any]) -> dict[str, Any]:
    env = record.get("environment")
    return env if isinstance(env, dict) else {}


def _host_name(record: Mapping[str, Any]) -> str:
    host = record.get("host") or {}
    env = _environment(record)
    return str(host.get("name") or env.get("host") or env.get("hostname") or "")


def _rows(current: list[LoadedRecord]) -> list[Row]:
    groups: dict[tuple[str, str, str], list[LoadedRecord]] = {}
    for entry in current:
        key = cell_key(entry.record)
        groups.setdefault((key.jax, key.backend, key.machine), []).append(entry)
    rows = []
    for (release, backend, machine), group in sorted(
        groups.items(), key=lambda item: (release_key(item[0][0]), item[0][1], item[0][2])
    ):
        cells = {cell_key(e.record).check: _cell(e) for e in group}
        envs = [_environment(e.record) for e in group]
        installs = [e.record.get("install") or {} for e in group]
        kinds = sorted({str(env["device_kind"]) for env in envs if env.get("device_kind")})
        counts = sorted({int(env["device_count"]) for env in envs if isinstance(env.get("device_count"), int)})
        pythons = sorted({str(env.get("python") or inst.get("python") or "") for env, inst in zip(envs, installs)} - {""})
        # A resolved-but-never-installed jaxlib would mislead; only runs count.
        jaxlibs = sorted(
            {
                str(env.get("jaxlib") or (inst.get("resolved") or {}).get("jaxlib") or "")
                for env, inst, e in zip(envs, installs, group)
                if e.record.get("status") != "not-installable"
            }
            - {""}
        )
        rows.append(
            Row(
                release=release,
                backend=backend,
                machine=machine,
                host=", ".join(sorted({_host_name(e.record) for e in group} - {""})),
                device_kind=", ".join(kinds),
                device_count=", ".join(str(c) for c in counts),
                python=", ".join(pythons),
                jaxlib=", ".join(jaxlibs),
                install=_install_status(group),
                cells=cells,
                reproduce=[cells[c].reproduce for c in sorted(cells, key=_check_order)],
            )
        )
    return rows


def _check_order(check: str) -> tuple[int, str]:
    return (CHECK_ORDER.index(check) if check in CHECK_ORDER else len(CHECK_ORDER), check)


def _install_status(group: list[LoadedRecord]) -> str:
    reasons = sorted({str(e.record.get("reason") or "no reason given")
                      for e in group if e.record.get("status") == "not-installable"})
    if not reasons:
        return "ok"
    neighbours = sorted({n for e in group for n in (e.record.get("install") or {}).get("neighbours") or []},
                        key=release_key)
    if neighbours:
        reasons.append(f"installable neighbours: {', '.join(neighbours)}")
    if len(reasons) == len(group) or all(e.record.get("status") == "not-installable" for e in group):
        return "not installable: " + "; ".join(reasons)
    return "partly: " + "; ".join(reasons)


def _cell(entry: LoadedRecord) -> Cell:
    record = entry.record
    check = str(record.get("check"))
    evidence = record.get("evidence") or {}
    summary = evidence.get("summary") if isinstance(evidence, dict) else None
    summary = summary if isinstance(summary, dict) else {}
    status = str(record.get("status"))
    if check == "scaling" and "lu_fed_by" not in summary:
        summary = {**summary, "lu_fed_by": _lu_fed_by(evidence)}  # records from before the key existed
    figure = key_figure(check, summary) if status == "ran" else ""
    return Cell(
        check=check,
        status=status,
        verdict=record.get("verdict"),
        figure=figure,
        reason=str(record.get("reason") or ""),
        created=str(record.get("created") or ""),
        reproduce=str(record.get("reproduce") or f"nox -s {check}-{record_jax(record)}"),
        file=entry.path.name,
        summary=dict(summary),
    )


def _num(value: Any, spec: str) -> str | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return format(value, spec)


def _lu_fed_by(evidence: Any) -> str | None:
    """Which collectives fed the LU in the case the verdict came from, read from the detail."""
    if not isinstance(evidence, dict) or not isinstance(evidence.get("verdict_from"), dict):
        return None
    source = evidence["verdict_from"]
    for case in evidence.get("structure") or []:
        if isinstance(case, dict) and case.get("loss") == "slogdet" and all(
                case.get(key) == source.get(key) for key in ("mode", "pass", "devices")):
            return ",".join(case.get("lu_fed_by") or [])
    return None


def key_figure(check: str, summary: Mapping[str, Any]) -> str:
    """The few numbers that show a check's verdict, in words."""
    parts: list[str] = []
    if check == "scaling":
        gathers = summary.get("all_gathers")
        if isinstance(gathers, int):
            parts.append(f"{gathers} all-gather" + ("" if gathers == 1 else "s"))
        fed_by = summary.get("lu_fed_by")
        if isinstance(fed_by, str):
            parts.append(f"LU input via {fed_by}" if fed_by else "no collective before the LU")
        lu, total = summary.get("lu_batch_per_device"), summary.get("global_batch")
        if lu is not None and total is not None:
            devices = summary.get("devices")
            on = f" on {devices} devices" if devices is not None else ""
            parts.append(f"LU batch {lu} per device of {total}{on}")
        effs = [
            f"{text} @{n}"
            for n in (2, 4)
            if (text := _num(summary.get(f"efficiency_{n}"), ".2f")) is not None
        ]
        if effs:
            parts.append("efficiency " + ", ".join(effs))
        if summary.get("positive_control_ok") is False:
            parts.append("positive control FAILED")
    elif check == "correctness":
        err = _num(summary.get("max_rel_error"), ".1e")
        if err is not None:
            parts.append(f"max rel error {err}")
        bad = summary.get("bad_count")
        first = summary.get("first_bad_index")
        if isinstance(bad, int) and bad > 0:
            parts.append(f"{bad} bad" + (f", first at index {first}" if first is not None else ""))
        elif bad == 0:
            parts.append("none bad")
        for name, label in (("nan_count", "NaN"), ("inf_count", "inf")):
            value = summary.get(name)
            if isinstance(value, int) and value > 0:
                parts.append(f"{value} {label}")
        if summary.get("crossed_boundary") is False:
            parts.append("did not reach 2**31 bytes")
    else:
        parts = [f"{k}={v}" for k, v in sorted(summary.items())][:4]
    return "; ".join(parts)


def _older(entry: LoadedRecord) -> OlderRecord:
    key = cell_key(entry.record)
    return OlderRecord(
        check=key.check,
        release=key.jax,
        backend=key.backend,
        machine=key.machine,
        created=str(entry.record.get("created") or ""),
        status=str(entry.record.get("status")),
        verdict=entry.record.get("verdict"),
        file=entry.path.name,
    )


def _machines(entries: list[LoadedRecord]) -> list[Machine]:
    found: dict[str, Machine] = {}
    for entry in entries:
        record = entry.record
        env = _environment(record)
        machine = found.setdefault(record_machine(record), Machine(record_machine(record), [], [], []))
        for target, value in (
            (machine.hosts, _host_name(record)),
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


# --------------------------------------------------------------------------
# Rendering


def _md(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _range_text(r: ProblemRange) -> str:
    if r.first_affected is None:
        return f"no measured release affected ({len(r.releases_measured)} measured: {', '.join(r.releases_measured)})"
    span = r.first_affected if r.first_affected == r.last_affected else f"{r.first_affected} … {r.last_affected}"
    text = f"affected {span} ({len(r.affected)} of {len(r.releases_measured)} measured releases)"
    if r.first_unaffected_above:
        text += f"; first unaffected above: {r.first_unaffected_above}"
    else:
        text += "; no unaffected release measured above it"
    if r.unaffected_inside:
        text += f"; unaffected inside the range: {', '.join(r.unaffected_inside)}"
    if r.inconclusive:
        text += f"; inconclusive: {', '.join(r.inconclusive)}"
    return text


def render_answer(report: Report) -> list[str]:
    """The lines at the top of matrix.md: which release to use, and why."""
    lines = ["## Answer", ""]
    if not report.backends:
        lines += ["No records yet: run `nox -s matrix` (or one `nox -s <check>-<release>`).", ""]
    for answer in report.backends:
        checks = ", ".join(answer.checks) or "no check that ran"
        if answer.lowest_passing:
            line = (
                f"- **{answer.backend}**: lowest release passing every check ({checks}): "
                f"**{answer.lowest_passing}**"
            )
            if answer.not_passing_above:
                line += f" — but above it, not passing: {', '.join(answer.not_passing_above)}"
        else:
            line = (
                f"- **{answer.backend}**: no measured release passes every check ({checks}); "
                f"measured: {', '.join(answer.releases_measured)}"
            )
        lines.append(line)
    lines += ["", "Known problems (ranges measured from the records; upstream fix for comparison):", ""]
    for problem in report.problems_known:
        links = ", ".join(f"<{link}>" for link in problem.links)
        lines.append(f"- **{problem.title}** — check `{problem.check}`; {links}")
        if not problem.ranges:
            lines.append(f"  - not measured yet (`nox -s {problem.check}-<release>`)")
        for r in problem.ranges:
            caveat = "" if r.backend in problem.shows_on else (
                f" (reported on {', '.join(problem.shows_on)} only: this does not clear a release there)")
            lines.append(f"  - {r.backend}: {_range_text(r)}{caveat}")
        for backend in problem.shows_on:
            if backend not in {r.backend for r in problem.ranges}:
                lines.append(f"  - {backend}: not measured in these records "
                             f"(`nox -s {problem.check}-<release> -- --backend cuda` on a {backend} machine)")
        lines.append(f"  - upstream: fixed in {problem.upstream_fixed_in} by {problem.upstream_change}")
    lines.append("")
    return lines


def _cell_text(cell: Cell | None) -> str:
    if cell is None:
        return "—"
    if cell.status == "not-installable":
        return "not installable"
    if cell.status != "ran":
        return f"{cell.status}: {cell.reason}" if cell.reason else cell.status
    verdict = f"**{cell.verdict}**" if cell.verdict == "affected" else str(cell.verdict)
    return f"{verdict} · {cell.figure}" if cell.figure else verdict


def render_rows(report: Report) -> list[str]:
    """The matrix table: one row per (release, backend, machine)."""
    header = ["Release", "Backend", "Devices", "Python", "jaxlib", "Install", *report.checks, "Reproduce"]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for row in report.rows:
        devices = " ".join(x for x in (row.device_kind, f"×{row.device_count}" if row.device_count else "") if x)
        cells = [
            row.release,
            row.backend,
            devices or "—",
            row.python or "—",
            row.jaxlib or "—",
            row.install,
            *(_cell_text(row.cells.get(check)) for check in report.checks),
            "<br>".join(f"`{cmd}`" for cmd in row.reproduce),
        ]
        lines.append("| " + " | ".join(_md(c) for c in cells) + " |")
    return lines


def render_markdown(report: Report) -> str:
    lines = ["# JAX slogdet: sharding scaling and large-batch correctness, by release", ""]
    lines += render_answer(report)
    lines += [f"## Matrix ({report.record_count} records, newest per cell)", ""]
    if report.rows:
        lines += render_rows(report)
    else:
        lines.append("No records.")
    lines.append("")
    if report.not_measured:
        lines += [f"Not measured yet: {', '.join(report.not_measured)}.", ""]
    lines += ["Records produced on: " + (_machines_text(report) or "no machine yet") + ".", ""]
    lines += ["## Plots", ""]
    for plot in report.plots:
        lines += [f"![{plot.title}]({plot.path})", ""]
    for note in report.plot_notes:
        lines.append(f"- {note}")
    if not report.plots and not report.plot_notes:
        lines.append("Plots were not built.")
    lines.append("")
    lines += [f"## Older records ({len(report.older)} superseded by a newer record of the same cell)", ""]
    for old in report.older:
        lines.append(
            f"- {old.check} {old.release} {old.backend} on {old.machine[:12]}: {old.created}, "
            f"{old.status}, verdict {old.verdict} (`{old.file}`)"
        )
    if not report.older:
        lines.append("None.")
    lines += ["", f"## Problems ({len(report.problems)} record files skipped)", ""]
    for problem in report.problems:
        lines.append(f"- `{problem['file']}`: {problem['reason']}")
    if not report.problems:
        lines.append("None.")
    lines.append("")
    return "\n".join(lines)


def _machines_text(report: Report) -> str:
    parts = []
    for m in report.machines:
        facts = [f"machine {m.machine[:12]}", *m.cpu_models, *m.devices]
        name = ", ".join(m.hosts) or "unnamed host"
        parts.append(f"`{name}` ({'; '.join(facts)})")
    return ", ".join(parts)


# --------------------------------------------------------------------------
# Writing


@dataclass
class WriteResult:
    markdown: Path
    json: Path
    plots: list[Path]
    problems: list[Problem]
    report: Report


def write_report(
    results_dir: Path,
    out_dir: Path,
    matrix_releases: Sequence[str] | None = None,
    plots: bool = True,
) -> WriteResult:
    """Load records, build the report and plots, write matrix.md and matrix.json."""
    results_dir, out_dir = Path(results_dir), Path(out_dir)
    loaded = load_records(results_dir)
    report = build_report(loaded.entries, matrix_releases=matrix_releases, problems=loaded.problems)
    for problem in report.problems:
        try:
            problem["file"] = str(Path(problem["file"]).relative_to(results_dir))
        except ValueError:
            pass
    written: list[Path] = []
    if plots:
        from .plots import make_plots  # the only module that imports matplotlib

        outcome = make_plots(loaded.entries, out_dir / "plots")
        written = [image.path for image in outcome.images]
        report.plots = [
            PlotRef(image.title, image.path.relative_to(out_dir).as_posix()) for image in outcome.images
        ]
        report.plot_notes = list(outcome.notes)
    else:
        report.plot_notes = ["Plots skipped (--no-plots)."]
    markdown, data = out_dir / "matrix.md", out_dir / "matrix.json"
    atomic_write_text(markdown, render_markdown(report))
    atomic_write_text(data, json.dumps(report.to_json(), indent=2, sort_keys=True, default=str) + "\n")
    return WriteResult(markdown, data, written, loaded.problems, report)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m kit.report", description=__doc__.splitlines()[0])
    parser.add_argument("--results", type=Path, default=Path("reports/results"), help="folder of records")
    parser.add_argument("--out", type=Path, default=Path("reports"), help="where matrix.md/json go")
    parser.add_argument("--no-plots", action="store_true", help="skip the PNG plots")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    result = write_report(args.results, args.out, plots=not args.no_plots)
    print(f"wrote {result.markdown} and {result.json} from {result.report.record_count} records "
          f"in {time.perf_counter() - start:.1f} s")
    for path in result.plots:
        print(f"wrote {path}")
    for note in result.report.plot_notes:
        print(f"note: {note}")
    for answer in render_answer(result.report)[2:]:
        if answer.startswith("- **"):
            print(answer)
    for problem in result.problems:
        print(f"PROBLEM: {problem.path}: {problem.reason}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
