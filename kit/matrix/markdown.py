"""reports/matrix.md: the matrix model rendered as markdown, answer first."""

from __future__ import annotations

from typing import Mapping

from ..records import Status, Verdict
from .metric_series import render_metrics
from .model import AffectedRange, Report
from .rows import CellFinding
from ..markdown_text import code, text
from ..text_bounds import CELL_CHARS, cut


def _range_text(r: AffectedRange) -> str:
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
        backend, measured = text(answer.backend), text(", ".join(answer.releases_measured))
        checks = text(", ".join(answer.checks)) or "no check that ran"
        if answer.lowest_passing:
            line = (
                f"- **{backend}**: lowest release passing every check ({checks}): "
                f"**{text(answer.lowest_passing)}**"
            )
            if answer.newest_passing and answer.newest_passing != answer.lowest_passing:
                line += f"; newest measured that passes: **{text(answer.newest_passing)}**"
            if answer.not_passing_above:
                line += f" — but above it, not passing: {text(', '.join(answer.not_passing_above))}"
        else:
            held = (f"; the newest, {text(answer.releases_measured[-1])}, has {text(', '.join(answer.newest_blocked))}"
                    if answer.newest_blocked else "")
            line = f"- **{backend}**: no measured release passes every check ({checks}){held}; measured: {measured}"
        if answer.uncounted:
            line += (f" (not counted, no verdict on any release: {text('; '.join(answer.uncounted))})")
        lines.append(line)
    if report.measured_only:
        lines.append(f"- not in the answer: {', '.join(code(c) for c in report.measured_only)} only measure "
                     "(metrics, no verdict of their own); their cells say *measured*")
    if not report.known_problems:
        # A heading over nothing read as if the list had been lost; say that there is nothing to compare with.
        lines += ["", "Known problems: no catalogue entry names a check of the matrix, so no range is measured against one.", ""]
        return lines
    lines += ["", "Known problems (ranges measured from the records; upstream fix for comparison):", ""]
    for problem in report.known_problems:
        links = ", ".join(f"<{link}>" for link in problem.links)
        lines.append(f"- **{text(problem.title)}** — check `{problem.check}`; {links}")
        if not problem.ranges:
            lines.append(f"  - not measured yet (`nox -s {problem.check}-<release>`)")
        for r in problem.ranges:
            if r.backend not in problem.shows_on and r.affected:
                # Affected where the problem does not show is another problem (the TPU's LU is not the CPU's);
                # only a clean range there needs saying, lest it be read as clearing the release.
                continue
            caveat = "" if r.backend in problem.shows_on else (
                f" (reported on {', '.join(problem.shows_on)} only: this does not clear a release there)")
            lines.append(f"  - {text(r.backend)}: {text(_range_text(r))}{caveat}")
            if r.workaround:
                lines.append(f"  - {r.backend}, workaround the records support: {r.workaround}")
        for backend in problem.shows_on:
            if backend not in {r.backend for r in problem.ranges}:
                how = ("-- --target tpu:v5e:2x2` here, compiled for a TPU without one, or on a TPU machine"
                       if backend == "tpu" else f"-- --backend cuda` on a {backend} machine")
                lines.append(f"  - {backend}: not measured in these records (`nox -s {problem.check}-<release> {how})")
        if problem.upstream_fixed_in:
            lines.append(f"  - upstream: fixed in {problem.upstream_fixed_in} by {problem.upstream_change}")
        else:
            lines.append("  - upstream: no fix recorded in the catalogue")
    lines.append("")
    return lines


def _finding_text(cell: CellFinding | None) -> str:
    if cell is None:
        return "—"
    if cell.status == Status.NOT_INSTALLABLE:
        return "not installable"
    # Every field is a record's: escaped here, so only the kit's own markup (the bold) is markup.
    ran_by = f" ({text(cell.ran_by)})" if cell.ran_by else ""
    if cell.status != Status.RAN:
        # A cell is short; the record keeps the whole reason (up to REASON_CHARS).
        status = text(cell.status)
        return (f"{status}: {text(cut(cell.reason, CELL_CHARS))}" if cell.reason else status) + ran_by
    verdict = "measured" if cell.measured else f"**{cell.verdict}**" if cell.verdict == Verdict.AFFECTED \
        else text(cell.verdict)
    return (f"{verdict} · {text(cut(cell.figure, CELL_CHARS))}" if cell.figure else verdict) + ran_by


def render_rows(report: Report) -> list[str]:
    """The matrix table: one row per (release, backend, machine), then each named environment's rows."""
    header = ["Release", "Backend", "Devices", "Python", "jaxlib", "Install", *map(text, report.checks), "Reproduce"]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for row in [*report.rows, *report.environment_rows]:
        devices = " ".join(x for x in (row.device_kind, f"×{row.device_count}" if row.device_count else "") if x)
        # A user's own installation reads as itself, with what it holds, never as the release it has.
        label = (f"**{text(row.environment)}** (your environment: {text(row.versions)})" if row.environment
                 else text(row.release))
        cells = [
            label,
            *(text(field or "—") for field in (row.backend, devices, row.python, row.jaxlib, row.install)),
            *(_finding_text(row.findings.get(check)) for check in report.checks),
            "<br>".join(code(cmd, in_table=True) if cmd else "—" for cmd in row.reproduce),
        ]
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def render_markdown(report: Report) -> str:
    lines = ["# JAX slogdet: sharding scaling and large-batch correctness, by release", ""]
    lines += render_answer(report)
    lines += [f"## Matrix ({report.record_count} records, newest per cell)", ""]
    if report.rows or report.environment_rows:
        lines += render_rows(report)
    else:
        lines.append("No records.")
    lines.append("")
    if report.not_measured:
        lines += [f"Not measured yet: {', '.join(report.not_measured)}.", ""]
    lines += ["Records produced on: " + (_machines_text(report) or "no machine yet") + ".", ""]
    if report.older:
        # One line: the list is for tools (matrix.json), not for the reader looking for an answer.
        lines += [f"Older records: {len(report.older)} superseded by a newer record of the same cell "
                  "(listed in matrix.json under `older`).", ""]
    lines += render_targets(report)
    lines += render_catalogue(report)
    lines += render_metrics(report.metrics)
    lines += ["## Plots", ""]
    for plot in report.plots:
        lines += [f"![{plot.title}]({plot.path})", ""]
    for note in report.plot_notes:
        lines.append(f"- {note}")
    if not report.plots and not report.plot_notes:
        lines.append("Plots were not built.")
    lines.append("")
    lines += [f"## Ad-hoc runs ({len(report.ad_hoc)} with parameters other than matrix.toml's; "
                  "not in the answer or the matrix)", ""]
    for run in report.ad_hoc:
        verdict = f", verdict {run.verdict}" if run.verdict else ""
        lines.append(f"- {text(run.check)} {text(run.release)} {text(run.backend)} on {text(run.machine[:12])} "
                     f"with {code(run.differs)}: {text(run.created)}, {text(run.status)}{text(verdict)} "
                     f"({code(run.file)})")
    if not report.ad_hoc:
        lines.append("None.")
    lines += ["", f"## Unusable files ({len(report.unusable_files)} record files skipped)", ""]
    for unusable in report.unusable_files:
        lines.append(f"- {code(unusable['file'])}: {text(unusable['reason'])}")
    if not report.unusable_files:
        lines.append("None.")
    lines.append("")
    return "\n".join(lines)


def render_targets(report: Report) -> list[str]:
    """Chips compiled for and not run: an answer line per target and check, then a row per release."""
    if not report.targets:
        return []
    lines = ["## Compiled for chips this machine lacks (`--target`: the chip's own compiler, nothing run)", ""]
    lines += [f"- **{text(a.title)}**, `{text(a.check)}`: {text(a.sentence)}" for a in report.target_answers]
    lines += ["", "| target | check | release | verdict | why | Reproduce |", "|---|---|---|---|---|---|"]
    for cell in report.targets:  # what ran says where its verdict came from; a release that could not, why not
        verdict = f"{cell.verdict}, {cell.compiled_not_run}" if cell.verdict else cell.status
        lines.append(f"| {text(cell.target)} | {text(cell.check)} | {text(cell.release)} | {text(verdict)} | "
                     f"{text(cell.reason[:200])} | {code(cell.reproduce) if cell.reproduce else ''} |")
    return lines + [""]


def render_catalogue(report: Report) -> list[str]:
    """The catalogue of known problems, each with the range the kit measured per backend (docs/known.md)."""
    if not report.catalogue:
        return []
    lines = ["## Known problems: the catalogue (`nox -s known`; `nox -s audit -- RELEASE` checks one installation)",
             "", "Ranges are what the kit measured with each problem's check (`known/measured/`), never a changelog's: per "
             "backend, and per chip its check was compiled for (nothing run there).",
             "", "| problem | kind | measured | fix |", "|---|---|---|---|"]
    for entry in report.catalogue:
        ranges = entry.get("ranges")
        spans = "; ".join(range_sentence(span) for span in (ranges if isinstance(ranges, list) else [])
                          if isinstance(span, Mapping)) or str(entry.get("measured_unreadable") or "never measured")
        fix = f"commit {str(entry['fix_commit'])[:10]}" if entry.get("fix_commit") else str(entry.get("fix_note", ""))
        lines.append(f"| {code(entry['id'], in_table=True)}: {text(entry['title'])} | {text(entry['kind'])} | "
                     f"{text(spans)} | {text(fix)} |")
    return lines + [""]


def range_sentence(span: Mapping[str, object]) -> str:
    """A measured range from its JSON (`kit.known.measured.Range.to_json`): present in, absent in, fixed in; a
    target's says it was compiled for the chip, not run."""
    where = f"{span['target']} ({span.get('compiled_not_run', 'compiled, not run')})" if span.get("target") \
        else str(span["backend"])
    present, absent = _releases(span["present_in"]), _releases(span["absent_in"])
    if not present and not absent:  # a GPU's or a TPU's problem, measured on CPU
        return f"{where}: untested in {', '.join(_releases(span['untested_in']))} (its check cannot tell there)"
    said = f"{where}: present in {', '.join(present) or 'none measured'}"
    if absent:
        said += f", absent in {', '.join(absent)}"
    if span["fixed_in"]:
        said += f" (fixed in {span['fixed_in']})"
    elif present:
        said += " (open on the newest measured)"
    return said


def _releases(value: object) -> list[str]:
    """A range's list of releases, as its JSON holds it (anything else: none)."""
    return [str(release) for release in value] if isinstance(value, list) else []


def _machines_text(report: Report) -> str:
    parts = []
    for m in report.machines:
        facts = [f"machine {m.machine[:12]}", *m.cpu_models, *m.devices]
        name = ", ".join(m.hosts) or "unnamed host"
        parts.append(f"{code(name)} ({text('; '.join(facts))})")
    return ", ".join(parts)

