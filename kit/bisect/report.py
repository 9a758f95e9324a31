"""What a bisect found, as markdown ready to paste into an issue and as JSON."""

from __future__ import annotations

import json
import shlex
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Mapping, Sequence

from packaging.version import Version

from .. import changelog, records
from ..index import PackageIndex
from .candidates import Candidate
from .options import Options
from .outcomes import describe
from .search import BisectResult, Outcome, Transition, expected_probes, non_monotonic
from .store import ProbeStore


@dataclass
class Finding:
    """Everything the report says."""

    name: str
    options: Options
    good: str
    bad: str
    bounds_from: str
    candidates: list[Candidate]
    outcomes: dict[str, Outcome]
    observations: dict[str, dict[str, Any]]
    probed_now: list[str]
    resumed: list[str]
    result: BisectResult[str] | None = None
    transitions: list[Transition[str]] = field(default_factory=list)
    seconds: float = 0.0
    metric: dict[str, Any] | None = None
    """``--metric``: the baseline, each measured release's median and every step over the factor."""

    def with_environment(self, state: str) -> list[str]:
        """Releases whose environment a probe of this bisect (now or before a resume) built or reused."""
        return [v for v, p in self.observations.items() if p.get("environment") == state]

    @property
    def built(self) -> list[str]:
        return self.with_environment("built")

    @property
    def reused(self) -> list[str]:
        return self.with_environment("reused")

    @property
    def from_records(self) -> list[str]:
        """Releases answered by a current record alone, without a run."""
        return [v for v, p in self.observations.items() if p.get("source") == "record"]

    @property
    def fix(self) -> bool:
        """True when hunting a fix: the bad release is the older one."""
        return Version(self.bad) < Version(self.good)

    @property
    def reproduce(self) -> str:
        """The command line, with the bounds spelled out when they came from the records (they move)."""
        argv = list(self.options.argv)
        if self.options.good is None:
            argv += ["--good", self.good, "--bad", self.bad]
        return "nox -s bisect -- " + shlex.join(argv)


def candidate_table(candidates: Sequence[Candidate], options: Options, store: ProbeStore) -> str:
    k = len(candidates)
    known = sum(1 for c in candidates if c.version in store.probes)
    plan = f"{k} probes (--all)" if options.scan else f"about {expected_probes(k)} probes"
    lines = [f"{k} candidate releases, oldest first; {plan}"
             + (f", {known} already done" if known else "") + ":"]
    for c in candidates:
        installs = f"jaxlib {c.jaxlib}, python {c.python}" if c.jaxlib else f"NOT INSTALLABLE: {c.problem}"
        lines.append(f"  jax {c.version:<10} {installs}")
    return "\n".join(lines)


def answer(finding: Finding) -> tuple[str, str, list[str]]:
    """(last good, first bad, ambiguous) in the user's words; for a fix, (last bad, first good, ...)."""
    assert finding.result is not None
    return finding.result.last_same, finding.result.first_different, finding.result.ambiguous


def release_notes(finding: Finding, index: PackageIndex) -> dict[str, str]:
    """Changelog sections of the releases after the last old-side release up to the first new-side one."""
    if finding.result is not None:
        versions = [*finding.result.ambiguous, finding.result.first_different]
    else:
        versions = [t.after for t in finding.transitions] + [v for t in finding.transitions for v in t.skipped_between]
    explicit = finding.options.changelog
    if explicit is None and (Path(".cache") / changelog.CHANGELOG_NAME).is_file():
        explicit = Path(".cache") / changelog.CHANGELOG_NAME
    return changelog.changelog_sections(sorted(set(versions), key=Version), index.cache_dir, explicit)


def render_markdown(finding: Finding, notes: Mapping[str, str]) -> str:
    o = finding.options
    lo, hi = sorted((finding.good, finding.bad), key=Version)
    what = f"check `{o.check}`" if o.check else f"script `{o.script}`"
    lines = [f"# Bisect: {o.subject} ({o.backend})", "",
             f"Searched jax {lo} … {hi} ({len(finding.candidates)} releases) with {what}; "
             f"good = {finding.good}, bad = {finding.bad} ({'hunting a fix' if finding.fix else 'hunting a regression'}).",
             f"{finding.bounds_from}.", ""]
    lines += _metric_lines(finding.metric) if finding.metric and o.scan else _answer_lines(finding)
    if finding.metric and not o.scan:
        lines += ["", *_metric_lines(finding.metric)]
    skipped = [v for v, out in finding.outcomes.items() if out is Outcome.SKIP]
    flipped = [v for v, p in finding.observations.items() if p.get("flipped")]
    lines += ["", "## Probes", "",
              f"{len(finding.outcomes)} probes ({len(finding.probed_now)} now, {len(finding.resumed)} from "
              f"the probes file); environments: {len(finding.built)} built, {len(finding.reused)} reused; "
              f"{len(finding.from_records)} answered by current records; {finding.seconds:.1f} s.", "",
              "| jax | jaxlib | python | outcome | how | reason |", "|---|---|---|---|---|---|"]
    for c in finding.candidates:
        out = finding.outcomes.get(c.version)
        p = finding.observations.get(c.version, {})
        label = describe(out, bool(o.script)) if out else "not probed"
        how = p.get("source", "") + (" (flipped: " + " → ".join(p.get("runs", [])) + ")" if p.get("flipped") else "")
        reason = str(p.get("reason", "") or (c.problem if not c.jaxlib else "")).replace("|", "\\|").replace("\n", " ")
        lines.append(f"| {c.version} | {c.jaxlib or '—'} | {c.python or '—'} | {label} | {how} | {reason[:200]} |")
    if skipped:
        lines += ["", "Skipped (not installable, crashed, inconclusive or exit 125): " + ", ".join(skipped) + "."]
    if flipped:
        lines += ["", "Flipped between runs: " + ", ".join(flipped) + "."]
    lines += ["", "## Release notes", ""]
    lines += [notes[v] + "\n" for v in notes] or ["(none)"]
    lines += ["## Reproduce with:", "", "    " + finding.reproduce, ""]
    return "\n".join(lines)


def _metric_lines(metric: Mapping[str, Any]) -> list[str]:
    unit = metric["unit"]
    lines = [f"## Metric `{metric['metric']}` ({metric['worse']} is worse, factor {metric['factor']:g})", "",
             f"The bounds differ by {metric['step']:.2f}x. Medians measured, oldest first:", "",
             "| jax | median | samples |", "|---|---|---|"]
    lines += [f"| {v} | {m:.4g} {unit} | {metric['samples'][v]} |" for v, m in metric["medians"].items()]
    steps = metric["steps"]
    lines += ["", f"Steps of at least {metric['factor']:g}x between neighbouring measured releases "
              "(Mann-Whitney U, p < 0.01):" if steps else "No step of the factor between neighbouring measured releases."]
    lines += [f"- jax {s['before']} → jax {s['after']}: {s['ratio']:.2f}x (p = {s['p']:.2g}): "
              f"{changelog.compare_url(s['before'], s['after'])}" for s in steps]
    return lines


def _answer_lines(finding: Finding) -> list[str]:
    if finding.result is None:
        return _transition_lines(finding)
    last_same, first_different, ambiguous = answer(finding)
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


def _transition_lines(finding: Finding) -> list[str]:
    lines = ["## Transitions (--all)", ""]
    if not finding.transitions:
        return lines + ["No change of outcome between the releases that could be tested."]
    if non_monotonic(finding.transitions):
        lines += [f"**Non-monotonic**: the outcome changes {len(finding.transitions)} times; "
                  "a plain bisect over this range would mislead.", ""]
    for t in finding.transitions:
        between = f" (untested between: {', '.join(t.skipped_between)})" if t.skipped_between else ""
        lines.append(f"- jax {t.before} ({t.outcome_before.value}) → jax {t.after} ({t.outcome_after.value}){between}: "
                     f"{changelog.compare_url(t.before, t.after)}")
    return lines


def to_json(finding: Finding) -> dict[str, Any]:
    data: dict[str, Any] = {
        "name": finding.name, "subject": finding.options.subject, "backend": finding.options.backend,
        "good": finding.good, "bad": finding.bad, "bounds_from": finding.bounds_from,
        "candidates": [asdict(c) for c in finding.candidates],
        "outcomes": {v: o.value for v, o in finding.outcomes.items()},
        "observations": finding.observations,
        "probes": len(finding.outcomes), "probed_now": finding.probed_now, "resumed": finding.resumed,
        "environments_built": finding.built, "environments_reused": finding.reused,
        "answered_by_records": finding.from_records, "seconds": round(finding.seconds, 1),
        "reproduce": finding.reproduce,
    }
    if finding.result is not None:
        last_same, first_different, ambiguous = answer(finding)
        data.update(last_same=last_same, first_different=first_different, ambiguous=ambiguous,
                    compare=changelog.compare_url(last_same, first_different))
    else:
        data["transitions"] = [{"before": t.before, "after": t.after, "outcome_before": t.outcome_before.value,
                                "outcome_after": t.outcome_after.value, "skipped_between": t.skipped_between}
                               for t in finding.transitions]
        data["non_monotonic"] = non_monotonic(finding.transitions)
    if finding.metric:
        data["metric"] = finding.metric
    return data


def write_report(reports_dir: Path, finding: Finding, markdown: str) -> None:
    records.atomic_write_text(reports_dir / f"bisect-{finding.name}.md", markdown)
    records.atomic_write_text(reports_dir / f"bisect-{finding.name}.json",
                              json.dumps(to_json(finding), indent=2, sort_keys=True) + "\n")
