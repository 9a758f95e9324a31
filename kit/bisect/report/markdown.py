"""What a bisect found, as markdown ready to paste into an issue and as JSON."""

from __future__ import annotations

import os
import re
import shlex
from pathlib import Path
from typing import Mapping, Sequence

from packaging.version import InvalidVersion, Version

from ...records import Source
from . import changelog
from repro.contract import strict_json

from ...atomic_files import atomic_write_texts
from ...errors import StorageError
from ..candidates import Candidate
from ..commits import commit_section
from .finding import BisectFinding, cost_lines, to_json
from ..probe import MetricSummary
from ..specs import HowToSearch
from ..observation import Observation
from ..outcomes import describe, label
from ..search import ProbeOutcome, expected_probes, non_monotonic
from .summary import BisectedScript, console_tail, script_lines, summary_lines
from .what_changed import Changes, changes_between, changes_lines
from ...user_paths import report_path, shown_path


def candidate_table(candidates: Sequence[Candidate], search: HowToSearch, known: set[str]) -> str:
    """The releases to search, what each would install here, and the plan, before any probe."""
    k = len(candidates)
    plan = f"{k} probes (--all)" if search.scan else f"about {expected_probes(k)} probes"
    lines = [f"{k} candidate releases, oldest first; {plan}"
             + (f", {len(known)} already known" if known else "") + ":"]
    for c in candidates:
        if c.yanked is not None:
            installs = f"YANKED ({c.yanked}): not probed"
        elif c.problem:
            installs = f"NOT INSTALLABLE: {c.problem}"
        else:
            installs = f"jaxlib {c.jaxlib}, python {c.python or 'chosen when probed'}"
        mark = "  (known)" if c.version in known else ""
        lines.append(f"  jax {c.version:<10} {c.uploaded or '':<10}  {installs}{mark}")
    return "\n".join(lines)


def release_versions(finding: BisectFinding) -> list[str]:
    """The releases whose notes explain the change: after the last old-side release up to the first new one."""
    if finding.result is not None:
        versions = [*finding.result.ambiguous, finding.result.first_different]
    else:
        versions = [t.after for t in finding.transitions] + [v for t in finding.transitions for v in t.skipped_between]
    return sorted(set(versions), key=Version)


def render_markdown(finding: BisectFinding, notes: Sequence[str], script: BisectedScript | None = None) -> str:
    """The report for the thread: the summary (at most 10 lines), the script, then each section folded."""
    runs = finding.specs.runs
    lo, hi = sorted((finding.good, finding.bad), key=Version)
    what = f"check `{runs.check}`" if runs.check else f"script `{finding.specs.report.script_shown or runs.script}`"
    searched = [f"Searched jax {lo} … {hi} ({len(finding.candidates)} releases) with {what}; "
                f"given good = {finding.good}, bad = {finding.bad} "
                f"({'hunting a fix' if finding.fix else 'hunting a regression'}).",
                f"{finding.bounds_from}.", ""]
    if finding.stopped:
        searched += ["## Stopped", "", f"The bounds did not test as given, so nothing was searched: {finding.stopped}."]
    elif finding.metric and finding.specs.search.scan:
        searched += _metric_lines(finding.metric)
    else:
        searched += _answer_lines(finding) if finding.result is not None else _transition_lines(finding)
        searched += ["", *_metric_lines(finding.metric)] if finding.metric else []
    lines = [*summary_lines(finding), "", *script_lines(script), ""] if script else [*summary_lines(finding), ""]
    lines += folded("The search and its answer", searched)
    for changes in what_else_changed(finding):
        lines += folded("What else changed", changes_lines(changes, _words(finding, changes),
                                                           shlex.split(finding.reproduce), held_by_commits(finding)))
    if finding.commits is not None:
        lines += folded("Commits", commit_section(finding.commits, finding.fix, finding.specs.search.crash, bool(runs.script)))
    lines += folded("Probes and their cost", ["## Probes", "", *cost_lines(finding), "", *_probe_table(finding),
                                              *_reuse_lines(finding)])
    output = _output_lines(finding)
    lines += folded("Output of each probe", output[1:]) if output else []
    lines += folded("Release notes", ["## Release notes", "", *notes]) if notes else []
    lines += ["## Reproduce with:", "", "    " + finding.reproduce, ""]
    return "\n".join(lines)


def folded(title: str, body: Sequence[str]) -> list[str]:
    """A section folded under its title (GitHub's <details>): the thread shows the summary, the rest on a click."""
    return ["<details>", f"<summary>{title}</summary>", "", *body, "", "</details>", ""]


def held_by_commits(finding: BisectFinding) -> dict[str, str]:
    """Package → version, for each package the commit phase's two deciding probes ran with at the same version
    (jaxlib included): the commit phase held them fixed, so they cannot be what changed."""
    found = finding.commits
    result = found.answer_level.result if found is not None else None
    if found is None or result is None:
        return {}
    one, two = found.observations.get(result.last_same), found.observations.get(result.first_different)
    if one is None or two is None or not one.installed.packages or not two.installed.packages:
        return {}
    return {name: version for name, version in one.installed.packages.items()
            if name != "jax" and two.installed.packages.get(name) == version}


def _words(finding: BisectFinding, changes: Changes) -> tuple[str, str]:
    """How the two ends of a change are called: (last good, first bad) for a regression, the other way for a fix."""
    before = finding.outcomes.get(changes.before)
    after = finding.outcomes.get(changes.after)
    return (f"last {before.value if before else 'old'}", f"first {after.value if after else 'new'}")


def _reuse_lines(finding: BisectFinding) -> list[str]:
    """What was answered without a run and why it matched; what was run although an earlier probe existed, and why."""
    reused = [(v, o) for v, o in finding.observations.items() if o.came_from.matched]
    again = [(v, o) for v, o in finding.observations.items() if o.came_from.not_reused]
    lines: list[str] = []
    if reused:
        lines += ["", "Reused without a run, each under the same identity (what ran, the release, every installed "
                  "package, the hardware and the JAX/XLA variables set):", ""]
        lines += [f"- jax {v} ({_source_text(o)}): the same {o.came_from.matched}" for v, o in _in_order(reused)]
    handed = [(v, o) for v, o in finding.observations.items() if o.came_from.source == Source.TRIAGE]
    if handed:
        lines += ["", "Taken from triage's runs, not probed by this bisect (the same install; what ran was the "
                  "check's capture, judged by the check's judge; never kept in the probe cache):", ""]
        lines += [f"- jax {v}: {o.came_from.taken_from}" for v, o in _in_order(handed)]
    if again:
        lines += ["", "Run again although an earlier probe of the release existed, because its identity differs:", ""]
        lines += [f"- jax {v}: {o.came_from.not_reused}" for v, o in _in_order(again)]
    return lines


def _output_lines(finding: BisectFinding) -> list[str]:
    """Each probe's last lines of output, and where its whole log is."""
    shown = [(v, o) for v, o in _in_order(list(finding.observations.items())) if o.came_from.output_tail or o.came_from.log]
    if not shown:
        return []
    lines = ["", "## Output of each probe", ""]
    for version, seen in shown:
        where = f" (whole log: `{seen.came_from.log}`)" if seen.came_from.log else ""
        lines += [f"**jax {version}**{where}:", "", "```", *seen.came_from.output_tail, "```", ""]
    return lines[:-1]


def _source_text(seen: Observation) -> str:
    if seen.came_from.source == Source.RECORD:
        return f"a current record, {seen.came_from.ran_at}"
    return f"probe cache, {seen.came_from.by or 'an earlier run'}, {seen.came_from.ran_at}"


def _in_order(items: list[tuple[str, Observation]]) -> list[tuple[str, Observation]]:
    return sorted(items, key=lambda item: _version_key(item[0]))


def _version_key(version: str) -> tuple[int, Version | str]:
    try:
        return (0, Version(version))
    except InvalidVersion:
        return (1, version)


def what_else_changed(finding: BisectFinding) -> list[Changes]:
    """The packages and era dates that changed across each change found (the result, or each transition)."""
    if finding.stopped or (finding.metric and finding.specs.search.scan):
        return []
    if finding.result is not None:
        pairs = [(finding.result.last_same, finding.result.first_different)]
    else:
        pairs = [(t.before, t.after) for t in finding.transitions]
    return [changes_between(a, b, finding.observations, finding.candidates) for a, b in pairs]


def _probe_table(finding: BisectFinding) -> list[str]:
    lines = ["| jax | uploaded | jaxlib | python | outcome | how | reason |", "|---|---|---|---|---|---|---|"]
    for c in finding.candidates:
        out = finding.outcomes.get(c.version)
        seen = finding.observations.get(c.version)
        if out is None or seen is None:
            lines.append(f"| {c.version} | {c.uploaded or '—'} | {c.jaxlib or '—'} | {c.python or '—'} | not probed | | |")
            continue
        text = label(out, seen, finding.specs.search.crash, bool(finding.specs.runs.script))
        text += f" (holding {', '.join(seen.installed.pins)})" if seen.installed.pins else ""
        reason = seen.found.reason.replace("|", "\\|").replace("\n", " ")
        how = _how(seen, bool(finding.specs.search.metric))
        lines.append(f"| {c.version} | {c.uploaded or '—'} | {seen.installed.jaxlib or c.jaxlib or '—'} | "
                     f"{seen.installed.python or c.python or '—'} | {text} | {how} | {reason[:200]} |")
    skipped = [_skipped(v, finding.observations.get(v)) for v, out in finding.outcomes.items() if out is ProbeOutcome.SKIP]
    if skipped:
        lines += ["", "Skipped (yanked, not installable or unknown, crashed, inconclusive or exit 125): " + ", ".join(skipped) + "."]
    flipped = [v for v, seen in finding.observations.items() if seen.found.flipped]
    if flipped:
        lines += ["", "Flipped between runs: " + ", ".join(flipped) + "."]
    return lines


def _skipped(version: str, seen: Observation | None) -> str:
    """A skipped release, with what it died of where a failure class says (an import, another exception)."""
    if seen is not None and seen.found.missing_import:
        return f"{version} (could not import {seen.found.missing_import})"
    if seen is not None and seen.found.exception:
        return f"{version} ({seen.found.exception[:120]})"
    return version


def _how(seen: Observation, metric: bool = False) -> str:
    kept = "kept metric samples" if metric else "probe cache"
    hows: dict[str, str] = {Source.CACHE: f"{kept} ({seen.came_from.by or 'earlier run'}, {seen.came_from.ran_at})",
                            Source.RECORD: f"record ({seen.came_from.ran_at})", Source.INDEX: "index metadata",
                            Source.TRIAGE: f"triage's run ({seen.came_from.ran_at}, {seen.cost.seconds:.0f} s)"}
    how = hows.get(seen.came_from.source, f"run ({seen.installed.environment or 'no'} environment, {seen.cost.seconds:.0f} s)")
    how += f", {seen.came_from.job}" if seen.came_from.job else ""
    return how + (" (flipped: " + " → ".join(seen.found.runs) + ")" if seen.found.flipped else "")


def _metric_lines(metric: MetricSummary) -> list[str]:
    unit = metric.unit
    lines = [f"## Metric `{metric.metric}` ({metric.worse} is worse, factor {metric.factor:g})", "",
             f"The bounds differ by {metric.step:.2f}x. Medians measured, oldest first:", "",
             "| jax | median | samples |", "|---|---|---|"]
    lines += [f"| {v} | {m:.4g} {unit} | {metric.samples[v]} |" for v, m in metric.medians.items()]
    steps = metric.steps
    lines += ["", f"Steps of at least {metric.factor:g}x between neighbouring measured releases "
              "(Mann-Whitney U, p < 0.01):" if steps else "No step of the factor between neighbouring measured releases."]
    lines += [f"- jax {s.before} → jax {s.after}: {s.ratio:.2f}x (p = {s.p:.2g}): "
              f"{changelog.compare_url(s.before, s.after)}" for s in steps]
    return lines


def _answer_lines(finding: BisectFinding) -> list[str]:
    assert finding.result is not None
    last_same, first_different, ambiguous = (finding.result.last_same, finding.result.first_different,
                                             finding.result.ambiguous)
    old_word, new_word = ("bad", "good") if finding.fix else ("good", "bad")
    lines = ["## Result", "",
             f"- last {old_word} release: **jax {last_same}**",
             f"- first {new_word} release: **jax {first_different}**"
             + (" (exact)" if not ambiguous else ""),
             f"- compare: {changelog.compare_url(last_same, first_different)}"]
    if ambiguous:
        lines.append(f"- ambiguous: the change is in one of {', '.join([*ambiguous, first_different])} "
                     f"(skipped releases between the two could hold it)")
    return lines


def _transition_lines(finding: BisectFinding) -> list[str]:
    """--all: every change of outcome, after saying whether each bound tested as it was given."""
    lines = ["## Transitions (--all)", ""]
    script = bool(finding.specs.runs.script)
    for flag, version, wanted, got in finding.bound_checks:
        if got is wanted:
            lines.append(f"- {flag} {version} tested {describe(wanted, script)}, as given.")
        else:
            tested = describe(got, script) if got else "not probed"
            lines.append(f"- **{flag} {version} tested {tested}, not {wanted.value}**: "
                         "the labels below are what each release tested, not the bounds given.")
    lines.append("")
    if not finding.transitions:
        return lines + ["No change of outcome between the releases that could be tested."]
    if non_monotonic(finding.transitions):
        lines += [f"**Non-monotonic**: the outcome changes {len(finding.transitions)} times; "
                  "a plain bisect over this range would mislead.", ""]
    for t in finding.transitions:
        between = f" (untested between: {', '.join(t.skipped_between)})" if t.skipped_between else ""
        lines.append(f"- jax {t.before} ({describe(t.outcome_before, script)}) → jax {t.after} "
                     f"({describe(t.outcome_after, script)}){between}: {changelog.compare_url(t.before, t.after)}")
    return lines


def publish_report(reports_dir: Path, finding: BisectFinding, notes: Sequence[str],
                   script: BisectedScript | None = None, paths: Mapping[str, str] | None = None) -> None:
    """Print the report (``-v``: all of it; else its summary), and write bisect-<name>.md and .json.

    A folder that cannot be written (read-only, full) costs the files, never
    the finding: the whole report is then on the console (with ``-v`` it was
    already) before the one `StorageError` sentence about them.
    """
    markdown = without_machine_paths(render_markdown(finding, notes, script), paths)
    if finding.specs.report.verbose:
        print(markdown, flush=True)
    try:
        _keep(reports_dir, finding, notes, markdown, paths)
    except StorageError:
        if not finding.specs.report.verbose:
            print(markdown, flush=True)
        raise
    if not finding.specs.report.verbose:  # the summary, and the end of a deciding probe's failure: the rest is in the files
        print("\n".join([line for line in summary_lines(finding) if line] + console_tail(finding)), flush=True)
    where = shown_path(reports_dir / f"bisect-{finding.name}.md", Path.cwd())
    print(f"report: {where} (and .json)" + ("" if finding.specs.report.verbose else "; -v prints every step"),
          flush=True)


def write_report(reports_dir: Path, finding: BisectFinding, notes: Sequence[str],
                 script: BisectedScript | None = None, paths: Mapping[str, str] | None = None) -> str:
    """Write bisect-<name>.md and .json; return the markdown."""
    markdown = without_machine_paths(render_markdown(finding, notes, script), paths)
    _keep(reports_dir, finding, notes, markdown, paths)
    return markdown


def without_machine_paths(text: str, paths: Mapping[str, str] | None) -> str:
    """``text`` with each absolute path of ``paths`` (longest first) replaced by how reports show it: a probe's
    traceback quotes files by absolute path, and the report is pasted where this machine means nothing."""
    for absolute in sorted(paths or {}, key=len, reverse=True):
        if absolute in ("", "/"):
            continue
        # Only where the path starts (not inside ../../tmp/x, already relative) and, for a file, ends.
        ends = "" if absolute.endswith("/") else r"(?![\w.-])"
        shown = (paths or {})[absolute]
        text = re.sub(r"(?<![\w./~-])" + re.escape(absolute) + ends, lambda _match: shown, text)
    return text


def machine_paths(project: Path, given: Sequence[Path] = ()) -> dict[str, str]:
    """Absolute path → shown, for `without_machine_paths`: each path the user gave (a script, a clone, the kit's
    own folder) as reports name it, then the project's folder (as written and resolved) and the home folder."""
    paths: dict[str, str] = {}
    for path in given:
        folder = "/" if path.is_dir() else ""
        for written in (Path(os.path.abspath(path)), path.resolve()):
            paths[str(written) + folder] = report_path(written, project) + folder
    paths[str(Path.home()) + "/"] = "~/"
    for root in (Path(os.path.abspath(project)), project.resolve()):
        paths[str(root) + "/"] = ""
    return paths


def _keep(reports_dir: Path, finding: BisectFinding, notes: Sequence[str], markdown: str,
          paths: Mapping[str, str] | None) -> None:
    """bisect-<name>.md and .json, written together; a `StorageError` when the folder cannot take them."""
    data = to_json(finding, list(notes))
    data["what_else_changed"] = [changes.to_json() for changes in what_else_changed(finding)]
    data["summary"] = summary_lines(finding)  # the lines the markdown opens with, for a tool that posts them
    try:
        reports_dir.mkdir(parents=True, exist_ok=True)  # --out DIR may name a folder still to make
        atomic_write_texts({reports_dir / f"bisect-{finding.name}.md": markdown,
                            reports_dir / f"bisect-{finding.name}.json": without_machine_paths(strict_json(data),
                                                                                                paths)})
    except OSError as error:
        raise StorageError(
            f"could not write the bisect's report into {reports_dir} ({error.strerror or error}); the finding "
            f"printed above is all there is of it: bisect-{finding.name}.md and .json were left as they were",
            "fix the folder's permissions (or free some space), then run the same command again",
        ) from None
