"""What one bisect found and what it cost: the facts both reports are written from."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from ...json_types import JsonObject

from ...records import Source
from ...reproduce_line import shell_join
from . import changelog
from ..commits import CommitFinding, commits_json
from ..bounds import Bounds
from ..candidates import Candidate
from ..specs import Specs
from ..observation import Observation
from ..probe import MetricSummary
from ..search import BisectResult, ProbeOutcome, Transition

REPORT_SCHEMA = 3
"""Version of the bisect JSON report's layout (2: ``commits``, the ``--commits`` phase)."""


@dataclass
class BisectFinding:
    """Everything the report says."""

    name: str
    specs: Specs
    """What ran, how the search went and what the report quotes (the driver's split of the command line)."""
    bounds: Bounds
    candidates: list[Candidate]
    outcomes: dict[str, ProbeOutcome]
    observations: dict[str, Observation]
    probed_now: list[str]
    """Releases this run measured; every other observation was known before it started."""
    result: BisectResult[str] | None = None
    transitions: list[Transition[str]] = field(default_factory=list)
    seconds: float = 0.0
    metric: MetricSummary | None = None
    """``--metric``: the baseline, each measured release's median and every step over the factor."""
    stopped: str = ""
    """Why the search stopped before it began (the bounds did not test as given), in the error's words."""
    rounds: list[list[str]] = field(default_factory=list)
    """The candidates the search waited for, round by round (one each unless --jobs or --slurm)."""
    commits: CommitFinding | None = None
    """``--commits``: the search below the releases."""

    def where(self, source: str) -> list[str]:
        """Releases whose observation came from ``source`` (run, cache, record, index)."""
        return [v for v, o in self.observations.items() if o.came_from.source == source]

    def environments(self, versions: list[str], state: str) -> list[str]:
        """Of ``versions``, those whose probe ``built`` or ``reused`` the release's environment."""
        return [v for v in versions if self.observations[v].installed.environment == state]

    @property
    def good(self) -> str:
        return self.bounds.good

    @property
    def bad(self) -> str:
        return self.bounds.bad

    @property
    def bounds_from(self) -> str:
        """How the bounds were chosen, in one sentence."""
        return self.bounds.how

    @property
    def fix(self) -> bool:
        """True when hunting a fix: the bad release is the older one."""
        return self.bounds.fix

    @property
    def bound_checks(self) -> list[tuple[str, str, ProbeOutcome, ProbeOutcome | None]]:
        """(flag, version, outcome wanted, outcome tested) for --good and --bad."""
        return [(flag, version, wanted, self.outcomes.get(version))
                for flag, version, wanted in (("--good", self.good, ProbeOutcome.GOOD), ("--bad", self.bad, ProbeOutcome.BAD))]

    @property
    def reproduce(self) -> str:
        """The command line, with the bounds spelled out when they came from the records or a gallop (they move)."""
        argv = list(self.specs.report.quoted_argv)
        if self.specs.search.good is None:
            argv += ["--good", self.good]
        if self.specs.search.bad is None:
            argv += ["--bad", self.bad]
        return f"{self.specs.report.command} {shell_join(argv)}"


def _count(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")


def cost_lines(finding: BisectFinding) -> list[str]:
    """What this run did, and what the earlier runs it reused did, each in one sentence."""
    now = finding.probed_now
    built_now = finding.environments(now, "built")
    # With --commits the commit phase has its own line; this one is the releases' (the total closes the list).
    seconds = finding.seconds - (finding.commits.seconds if finding.commits else 0.0)
    span = "on releases" if finding.commits else "in all"
    if now:
        this = (f"This run probed {_count(len(now), 'release')} ({', '.join(now)}): "
                f"{_count(len(built_now), 'environment')} built, {len(finding.environments(now, 'reused'))} reused; "
                f"{seconds:.1f} s {span}.")
    elif finding.commits:
        this = (f"This run ran no release probe and built nothing for the releases: each was known before it "
                f"started ({seconds:.1f} s {span}).")
    else:
        this = f"This run ran nothing and built nothing: every probe was known before it started ({seconds:.1f} s)."
    lines = [this, rounds_line(finding)] if finding.rounds else [this]
    earlier = finding.where(Source.CACHE)
    if earlier:
        observed = [finding.observations[v] for v in earlier]
        runs = sorted({o.came_from.by for o in observed if o.came_from.by})
        times = sorted(o.came_from.ran_at for o in observed if o.came_from.ran_at)
        when = f", {times[0]} … {times[-1]}" if times else ""
        kept = "their kept metric samples" if finding.specs.search.metric else "the probe cache"
        lines.append(f"Earlier runs answered {len(earlier)} ({', '.join(earlier)}) from {kept}; "
                     f"they had built {_count(len(finding.environments(earlier, 'built')), 'environment')} and spent "
                     f"{sum(o.cost.seconds for o in observed):.0f} s probing them ({', '.join(runs) or 'unnamed'}{when}).")
        if not now:  # the whole answer is remembered: say what the memory is keyed by, and how to distrust it
            lines.append("A remembered probe counts where the check (its parameters or the script's content), the "
                         "release, every installed package, the backend, the hardware and the JAX_*/XLA_* variables "
                         "are the same; if something else changed what a run does (another variable, a file the "
                         "script reads), rerun with --fresh.")
    handed = finding.where(Source.TRIAGE)
    if handed:
        spent = sum(finding.observations[v].cost.seconds for v in handed)
        lines.append(f"Triage's runs answered {len(handed)} ({', '.join(handed)}): its capture of the block, run "
                     f"there in the same install and judged by the check's judge ({spent:.0f} s, spent before "
                     "this bisect).")
    records = finding.where(Source.RECORD)
    if records:
        lines.append(f"Current matrix records answered {len(records)} ({', '.join(records)}) without a run.")
    index = finding.where(Source.INDEX)
    if index:
        lines.append(f"The index's metadata answered {len(index)} ({', '.join(index)}: yanked or not installable).")
    if finding.commits is not None:
        lines += [_commit_cost(finding.commits), f"{finding.seconds:.1f} s in all."]
    return lines


def _commit_cost(found: CommitFinding) -> str:
    """The commit phase's own line: how many commits ran, on which builds, what was built, how long."""
    ran = [found.observations[k] for k in found.commit_probes if k in found.observations]
    built = sum(1 for o in ran if o.installed.environment == "built")
    builds = sorted({o.installed.jaxlib for o in ran if o.installed.jaxlib})
    known = len(found.observations) - len(ran)
    return (f"The commit phase ran {_count(len(ran), 'commit probe')}"
            + (f" on jaxlib {', '.join(builds)}" if builds else "")
            + f" ({sum(o.cost.seconds for o in ran):.0f} s of probes), {_count(built, 'environment')} built for it, "
            f"{known} answered without a run (probe cache or the release's own probe); {found.seconds:.1f} s for the commit phase.")


def rounds_line(finding: BisectFinding) -> str:
    """How many rounds the search waited for, and how many probes ran together."""
    o = finding.specs.search
    where = "SLURM jobs" if o.slurm else "side by side on this machine" if o.jobs > 1 else "one at a time"
    jobs = f"up to {o.jobs} per round, " if o.jobs > 1 else ""
    return (f"The search waited for {_count(len(finding.rounds), 'round')} of probes ({jobs}{where}): "
            + "; ".join(", ".join(batch) for batch in finding.rounds) + ".")


def to_json(finding: BisectFinding, notes: list[str]) -> JsonObject:
    """The JSON report (``schema`` names its layout)."""
    data: JsonObject = {
        "schema": REPORT_SCHEMA,
        "name": finding.name, "subject": finding.specs.runs.subject, "backend": finding.specs.runs.backend,
        "good": finding.good, "bad": finding.bad, "bounds_from": finding.bounds_from,
        # Which way first_different points (a first good release when hunting a fix) and where the ends came from
        # (command line, gallop or records): what the sentences say, for a tool that should not parse them.
        "fix": finding.fix, "bounds_source": finding.bounds.source,
        "bounds_tested": {flag: {"version": version, "wanted": wanted.value, "tested": got.value if got else None}
                          for flag, version, wanted, got in finding.bound_checks},
        "candidates": [asdict(c) for c in finding.candidates],
        "outcomes": {v: o.value for v, o in finding.outcomes.items()},
        "observations": {v: o.to_json() for v, o in finding.observations.items()},
        "probes": len(finding.outcomes), "probed_now": finding.probed_now,
        "answered_by_cache": finding.where(Source.CACHE), "answered_by_records": finding.where(Source.RECORD),
        "answered_by_triage": finding.where(Source.TRIAGE),
        "environments_built_now": finding.environments(finding.probed_now, "built"),
        "environments_reused_now": finding.environments(finding.probed_now, "reused"),
        "seconds": round(finding.seconds, 1), "cost": cost_lines(finding),
        "rounds": finding.rounds, "jobs": finding.specs.search.jobs, "slurm": finding.specs.search.slurm is not None,
        "release_notes": notes, "reproduce": finding.reproduce,
    }
    if finding.stopped:
        data["stopped"] = finding.stopped
    elif finding.result is not None:
        result = finding.result
        data.update(last_same=result.last_same, first_different=result.first_different,
                    ambiguous=result.ambiguous, compare=changelog.compare_url(result.last_same, result.first_different))
    else:
        data["transitions"] = [{"before": t.before, "after": t.after, "outcome_before": t.outcome_before.value,
                                "outcome_after": t.outcome_after.value, "skipped_between": t.skipped_between}
                               for t in finding.transitions]
        data["non_monotonic"] = len(finding.transitions) > 1
    if finding.metric:
        data["metric"] = finding.metric.to_json()
    if finding.commits is not None:
        data["commits"] = commits_json(finding.commits)
    return data
