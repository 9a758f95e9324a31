"""What the commit phase found and what it cost: the facts the report's commit section is written from.

One verdict, from the user's side (:attr:`CommitFinding.verdict`, a `CommitVerdict`: its words and what each
means are in kit/bisect/commits/verdict.py).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from ...json_types import JsonObject

from ...history.commit_range import CommitRange
from ...history.commits import CommitInfo, commit_info, compare_url, compiled_changes, xla_patches
from ...history.leads import BuildPair, Lead, binary_leads, gated_leads
from ...history.op_files import OpFiles, commits_touching, op_files
from ...history.twins import branch_twins, first_release, main_line_twin
from ...history.source import History
from ...history.version_file import dotted
from ...history.xla import xla_compare_url, xla_revision
from ...install import JAX_ALONE
from .builds import Build
from .candidates import CommitCandidate
from .verdict import CommitVerdict
from ..observation import Observation
from ..search import BisectResult, BoundsProblem, ProbeOutcome


@dataclass
class CommitLevel:
    """One search over one list: the release range, or the branch a merge brought in."""

    commit_range: CommitRange
    candidates: list[CommitCandidate]
    problem: BoundsProblem[str] | None = None
    result: BisectResult[str] | None = None
    outcomes: dict[str, ProbeOutcome] = field(default_factory=dict)
    unprobed: list[str] = field(default_factory=list)
    """Commits left unrun once the search's skip budget was spent (they count as skipped)."""
    old_end_taken: str | None = None
    """The old end, when it was never run: the answer did not rest on it (`search.bisect_taking_old_end`)."""


@dataclass(frozen=True)
class PairProbe:
    """One probe of a claim's pair: which commit, on which jaxlib, what it gave (or why it could not run)."""

    commit: str
    jaxlib: str
    outcome: str
    """``good``, ``bad``, or ``could not run: <why>`` (``skip`` when it ran and said nothing)."""
    forced: bool = False
    """Run past JAX's version check (`commit_candidates.forced_on`): said so wherever it is shown."""
    note: str = ""
    """What the probe stands for in its pair (``the release's own probe``, ``the old end's Python``)."""
    laid: str = ""
    """`kit.install.overlay.JAX_ALONE` where only the commit's ``jax/`` was laid (`alone_note`), else ""."""

    def text(self) -> str:
        forced = " (forced: JAX's version check relaxed)" if self.forced else ""
        laid = f" ({self.laid})" if self.laid else ""
        note = f" ({self.note})" if self.note else ""
        return f"{self.commit[:10]} on jaxlib {self.jaxlib}{laid}{forced}: {self.outcome}{note}"


def alone_note(candidate: CommitCandidate) -> str:
    """What a probe of ``candidate`` says of its overlay: `JAX_ALONE` where that was laid, else nothing."""
    return candidate.laid if candidate.laid == JAX_ALONE else ""


@dataclass(frozen=True)
class Untested:
    """Commits whose Python was never run on the newer build, and why."""

    first: str
    last: str
    count: int
    build: str
    why: str
    stood_in: str
    """The oldest commit that ran on the newer build (it gave the new outcome there)."""
    forced_lead: tuple[str, str] | None = None
    """(commit, title) where the outcome changes with the span forced onto the newer build: a lead only."""


@dataclass(frozen=True)
class TieBreak:
    """Binary or Python: ``probe`` is the commit run on the other build (None when the ends decided it)."""

    kind: str
    """``binary``, ``python``, ``build-dependent`` (the commit, with the newer jaxlib only), ``unknown``,
    ``untested`` (the build matters; a Python change that needs the newer build was not ruled out) or
    ``untested-elsewhere`` (the commit, found on one build; its pair could not run on the other) or
    ``python-both`` (the commit, found on one build, and the same pair on the other gave the same change) or
    ``build-dependent-older`` (the commit, found on the older build; the pair on the newer one shows no change)."""
    probe: CommitCandidate | None
    old_build: Build | None
    new_build: Build | None
    outcome: ProbeOutcome | None
    why: str = ""
    """The facts that decided it, in one sentence for the report."""
    gates: tuple[str, ...] = ()
    """``build-dependent``: the jaxlib version comparisons the commit's diff adds or changes."""
    evidence: tuple[PairProbe, ...] = ()
    """The probes the claim rests on, printed beside it (`kit.bisect.commits.pairs`)."""
    untested: Untested | None = None
    """``untested``: the commits whose Python never ran on the newer build."""
    needs: str = ""
    """``build-dependent`` from the found pair on another build: the jaxlib the change needs."""


@dataclass(frozen=True)
class CompiledChange:
    """Where to read next when the change is not in JAX's Python."""

    old_jaxlib: str
    new_jaxlib: str
    old_xla: str | None
    new_xla: str | None
    compiled_files: tuple[str, ...]
    """Files under jaxlib/ that are not Python and changed in the range."""
    xla_patches: tuple[str, ...] = ()
    """Patches JAX's build lays on XLA (``third_party/xla/*.patch``) that changed in the range."""

    @property
    def xla_compare(self) -> str | None:
        same = self.old_xla == self.new_xla  # a link from a revision to itself shows nothing
        return xla_compare_url(self.old_xla, self.new_xla) if self.old_xla and self.new_xla and not same else None


@dataclass
class CommitFinding:
    origin: str
    """Where the history came from (``--jax-repo``, matrix.toml, the kit's clone)."""
    builds: list[Build]
    levels: list[CommitLevel]
    tie_break: TieBreak | None = None
    commit_probes: list[str] = field(default_factory=list)
    """Keys of the commit probes this run measured (cache and release answers not counted)."""
    observations: dict[str, Observation] = field(default_factory=dict)
    probed_candidates: dict[str, CommitCandidate] = field(default_factory=dict)
    seconds: float = 0.0
    runnable_checks: tuple[int, float] = (0, 0.0)
    """(pairs laid over only to ask whether JAX runs there, their seconds): `kit.bisect.commits.runnable`."""
    last_same: CommitInfo | None = None
    first_different: CommitInfo | None = None
    compiled: CompiledChange | None = None
    extension_versions: dict[str, int | None] = field(default_factory=dict)
    """Each build's ``xla_client._version``, by jaxlib: asked when the change is not in JAX's Python."""
    leads: list[Lead] = field(default_factory=list)
    leads_note: str = ""
    op_files: OpFiles | None = None
    """The files the failing op lives in, where the leads were filtered to them (`kit.history.op_files`)."""
    main_line: tuple[CommitInfo, str] | None = None
    """The first changed commit's twin on JAX's main line when it is a release branch's cherry-pick, and how
    it was recognised (`kit.history.twins`)."""
    released: tuple[str | None, str | None] = (None, None)
    """With a twin: the first release whose tag holds the branch's commit, and the twin (None: none here yet)."""
    branch_copies: list[tuple[CommitInfo, str, str | None]] = field(default_factory=list)
    """The other way round: a main-line first changed commit's copies on release branches, each with how it was
    recognised and the first release holding it (the fix may reach users there first: `kit.history.twins`)."""

    @property
    def answer_level(self) -> CommitLevel:
        """The innermost search that found a change (a merge's branch), else the release range's."""
        found = [level for level in self.levels if level.result is not None]
        return found[-1] if found else self.levels[0]

    @property
    def verdict(self) -> CommitVerdict:
        if self.tie_break is not None and self.tie_break.kind == "binary":
            return CommitVerdict.NOT_IN_PYTHON
        if self.tie_break is not None and self.tie_break.kind == "untested":
            return CommitVerdict.BUILD_MATTERS
        if self.levels[0].problem is not None:
            return CommitVerdict.STOPPED
        if self.tie_break is not None and self.tie_break.kind == "unknown":
            return CommitVerdict.BINARY_MAY_BE_THE_CAUSE
        result = self.answer_level.result
        if result is None or not result.exact or self.laid_apart:
            return CommitVerdict.SHORT_LIST
        if self.tie_break and self.tie_break.kind == "build-dependent":
            return CommitVerdict.COMMIT_WITH_NEWER_JAXLIB
        return CommitVerdict.COMMIT

    @property
    def laid_apart(self) -> tuple[str, str] | None:
        """What was laid of the answer's two commits, where it differs (its jaxlib Python with one, ``jax/``
        alone with the other): the outcome may follow what was laid, so the pair is a range, not a commit."""
        result = self.answer_level.result
        if result is None:
            return None
        pair = [self.probed_candidates.get(key) for key in (result.last_same, result.first_different)]
        if pair[0] is None or pair[1] is None or pair[0].laid == pair[1].laid:
            return None
        return pair[0].laid, pair[1].laid

    def laid_of(self, key: str) -> str:
        """`kit.install.overlay.JAX_ALONE` where only the commit's ``jax/`` was laid, else ""."""
        candidate = self.probed_candidates.get(key)
        return candidate.laid if candidate is not None and candidate.laid == JAX_ALONE else ""

    def outcome_of(self, key: str) -> ProbeOutcome | None:
        """What the first search that judged ``key`` made of it."""
        return next((level.outcomes[key] for level in self.levels if key in level.outcomes), None)

    def answer_build(self, side: str) -> str | None:
        """The jaxlib the answer's ``last_same`` or ``first_different`` probe ran on (the search's key, which
        names the build for a commit moved to another one)."""
        result = self.answer_level.result
        return self.build_of(getattr(result, side)) if result is not None else None

    def build_of(self, key: str) -> str | None:
        seen = self.observations.get(key)
        candidate = self.probed_candidates.get(key)
        return (seen.installed.jaxlib if seen else None) or (candidate.jaxlib if candidate else None)


def describe_commits(history: History, found: CommitFinding, op: str = "") -> None:
    """Fill in the commits named by the answer and, when the change is compiled, the XLA range.

    ``op``: the primitive ``--explain PROGRAM --op FILE:LINE:OP`` names; with
    the failing probes' output it says which files the leads of an untested
    span are filtered to (:func:`failing_op_files`).
    """
    result = found.answer_level.result
    if result is not None:
        found.last_same = commit_info(history, _commit(found, result.last_same))
        found.first_different = commit_info(history, _commit(found, result.first_different))
        twin = main_line_twin(history, found.first_different.hash)
        found.main_line = (commit_info(history, twin.commit), twin.how) if twin else None
        if twin is not None:
            found.released = (first_release(history, found.first_different.hash), first_release(history, twin.commit))
        else:
            found.released = (first_release(history, found.first_different.hash), None)
            found.branch_copies = [(commit_info(history, copy.commit), copy.how, first_release(history, copy.commit))
                                   for copy in branch_twins(history, found.first_different.hash)]
    if found.verdict.about_the_build:
        found.compiled = _compiled_change(history, found)
        commit_range = found.levels[0].commit_range
        versions = found.extension_versions
        found.leads, found.leads_note = binary_leads(
            history, commit_range.old_end, commit_range.commits[-1],
            versions.get(found.compiled.old_jaxlib), versions.get(found.compiled.new_jaxlib))
        untested = found.tie_break.untested if found.tie_break else None
        if untested is not None:
            pair = BuildPair(dotted(found.compiled.old_jaxlib), dotted(found.compiled.new_jaxlib),
                             versions.get(found.compiled.old_jaxlib), versions.get(found.compiled.new_jaxlib))
            found.op_files = failing_op_files(history, found, commit_range.commits[-1], op)
            gated, note = gated_leads(history, commit_range.old_end, untested.stood_in, pair, found.op_files)
            if untested.forced_lead is not None:
                gated.insert(0, Lead(*untested.forced_lead, f"the outcome changes here with the untested span forced "
                                                            f"onto jaxlib {untested.build} (JAX's version check "
                                                            "relaxed): a lead, not an answer"))
            shown = {lead.commit for lead in gated}
            others = [lead for lead in found.leads if lead.commit not in shown]
            touching = (commits_touching(history, commit_range.old_end, commit_range.commits[-1],
                                         found.op_files.files) if found.op_files else None)
            if touching is not None:
                kept = [lead for lead in others if lead.commit in touching]
                note += f"; the other leads (fixes, extension gates) too: {len(kept)} of {len(others)} touch those files"
                others = kept
            found.leads = gated + others
            found.leads_note = "; ".join(n for n in (note, found.leads_note) if n)


def failing_op_files(history: History, found: CommitFinding, commit: str, op: str = "") -> OpFiles | None:
    """The JAX files (at ``commit``) the failing op lives in, from ``op`` and every bad probe's output."""
    def said(wanted: ProbeOutcome) -> list[str]:
        return ["\n".join(seen.came_from.output_tail + [seen.found.reason]) for key, seen in found.observations.items()
                if found.outcome_of(key) is wanted]
    return op_files(history, commit, said(ProbeOutcome.BAD), op, passing=said(ProbeOutcome.GOOD))


def _commit(found: CommitFinding, key: str) -> str:
    candidate = found.probed_candidates.get(key)
    return candidate.commit if candidate else key


def _compiled_change(history: History, found: CommitFinding) -> CompiledChange:
    commit_range = found.levels[0].commit_range
    old, new = commit_range.old_end, commit_range.commits[-1]
    builds = sorted(found.builds, key=lambda b: dotted(b.jaxlib))
    return CompiledChange(builds[0].jaxlib if builds else "?", builds[-1].jaxlib if builds else "?",
                          xla_revision(history, old), xla_revision(history, new),
                          tuple(compiled_changes(history, old, new)), tuple(xla_patches(history, old, new)))


def commits_json(found: CommitFinding) -> JsonObject:
    """The report's ``commits`` object."""
    first = found.levels[0].commit_range
    result = found.answer_level.result
    data: JsonObject = {
        "history": found.origin, "verdict": found.verdict,
        "range": {"old": first.old_name, "new": first.new_name, "old_end": first.old_end,
                  "new_end": first.commits[-1], "commits": len(first.commits), "shape": first.shape,
                  "off_line": list(first.off_line)},
        "builds": [asdict(b) for b in found.builds],
        "levels": [_level_json(level) for level in found.levels],
        "probes": [_probe_json(found, key) for key in found.observations],
        "probed_now": found.commit_probes, "seconds": round(found.seconds, 1),
        "runnable_checks": {"pairs": found.runnable_checks[0], "seconds": found.runnable_checks[1]},
        "cannot_run": [_commit(found, k) for k, seen in found.observations.items() if seen.found.jax_cannot_run],
    }
    if result is not None:
        data.update(ambiguous=[_commit(found, k) for k in result.ambiguous],
                    compare=compare_url(_commit(found, result.last_same), _commit(found, result.first_different)))
    for name, info in (("last_same", found.last_same), ("first_different", found.first_different)):
        if info is None:
            continue
        answer: JsonObject = {**info.to_json(), "jaxlib": found.answer_build(name)}
        if name == "first_different" and found.main_line is not None:
            answer["main_line"] = {**found.main_line[0].to_json(), "how": found.main_line[1],
                                   "first_release": found.released[1]}
            answer["first_release"] = found.released[0]
        if name == "first_different" and found.branch_copies:
            answer["release_branches"] = [{**info.to_json(), "how": how, "first_release": release}
                                          for info, how, release in found.branch_copies]
            answer["first_release"] = found.released[0]
        data[name] = answer
    if found.tie_break is not None:
        tie = found.tie_break
        data["tie_break"] = {"kind": tie.kind, "probe": tie.probe.commit if tie.probe else None,
                             "on_jaxlib": tie.probe.jaxlib if tie.probe else None,
                             "outcome": tie.outcome.value if tie.outcome else None,
                             "old_jaxlib": tie.old_build.jaxlib if tie.old_build else None,
                             "new_jaxlib": tie.new_build.jaxlib if tie.new_build else None, "why": tie.why,
                             "gates": list(tie.gates), "evidence": [asdict(probe) for probe in tie.evidence],
                             "untested": asdict(tie.untested) if tie.untested else None, "needs": tie.needs or None}
    if found.compiled is not None:
        data["not_in_python"] = {**asdict(found.compiled), "compiled_files": list(found.compiled.compiled_files),
                                 "xla_patches": list(found.compiled.xla_patches),
                                 "xla_compare": found.compiled.xla_compare,
                                 "extension_versions": dict(found.extension_versions),
                                 "leads": [asdict(lead) for lead in found.leads], "leads_note": found.leads_note,
                                 "op_files": asdict(found.op_files) if found.op_files else None}
    return data


def _level_json(level: CommitLevel) -> JsonObject:
    return {"shape": level.commit_range.shape, "candidates": len(level.candidates),
            "problem": level.problem.message if level.problem else None,
            "last_same": level.result.last_same if level.result else None,
            "first_different": level.result.first_different if level.result else None,
            "unprobed": len(level.unprobed), "old_end_taken": level.old_end_taken,
            "outcomes": {k: o.value for k, o in level.outcomes.items()}}


def _probe_json(found: CommitFinding, key: str) -> JsonObject:
    seen = found.observations[key]
    candidate = found.probed_candidates.get(key)
    outcome = found.outcome_of(key)
    return {"key": key, "commit": candidate.commit if candidate else key,
            "outcome": outcome.value if outcome else None,
            "title": candidate.title if candidate else "", "date": candidate.date if candidate else "",
            "jaxlib": seen.installed.jaxlib, "python": seen.installed.python,
            "laid": candidate.laid if candidate else None,
            "release_env": candidate.build.release if candidate and candidate.build else None,
            "status": seen.found.status, "verdict": seen.found.verdict, "reason": seen.found.reason,
            "source": seen.came_from.shown, "jax_cannot_run": seen.found.jax_cannot_run,
            "environment": seen.installed.environment,
            "seconds": seen.cost.seconds, "ran_at": seen.came_from.ran_at}
