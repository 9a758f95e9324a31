"""The report's commit section: the answer in one paragraph, then every commit probe."""

from __future__ import annotations

from typing import Sequence

from ...records import Source, Status
from ...history.commits import CommitInfo, commit_url, compare_url
from .finding import CommitFinding, TieBreak
from .verdict import CommitVerdict
from ..outcomes import label


def commit_section(found: CommitFinding, fix: bool, crash: str, script: bool) -> list[str]:
    """Markdown lines: what was searched, the verdict, the named commits, the probes."""
    first = found.levels[0]
    builds = "; ".join(f"jaxlib {b.jaxlib} from jax {b.release}'s environment ({b.side} side"
                       f"{'' if b.built else ', not built before'})" for b in found.builds)
    lines = ["## Commits", "",
             f"Searched {first.commit_range.old_name} … {first.commit_range.new_name} in {found.origin}: "
             f"{first.commit_range.shape}. Builds: {builds or 'none'}.", "",
             f"**Answer: {found.verdict.answer}.**", ""]
    lines += _answer(found, fix)
    lines += ["", f"### Commit probes, in the order they ran ({len(found.commit_probes)} run now, "
                  f"{found.seconds:.0f} s)", "",
              "| commit | date | title | jaxlib build | outcome | how | seconds |", "|---|---|---|---|---|---|---|"]
    lines += _probe_rows(found, crash, script)
    return lines


def _answer(found: CommitFinding, fix: bool) -> list[str]:
    old_word, new_word = ("bad", "good") if fix else ("good", "bad")
    verdict = found.verdict
    if verdict is CommitVerdict.STOPPED:
        return _stopped(found)
    if verdict in (CommitVerdict.BUILD_MATTERS, CommitVerdict.NOT_IN_PYTHON):
        return _binary_answer(found, old_word, new_word)
    lines: list[str] = []
    if verdict is CommitVerdict.BINARY_MAY_BE_THE_CAUSE:
        lines += _undecided(found, old_word, new_word)
    elif found.last_same is not None and found.first_different is not None:
        lines += [f"- last {old_word} commit: {_named(found.last_same, found.answer_build('last_same'))}",
                  f"- first {new_word} commit: {_named(found.first_different, found.answer_build('first_different'))}"
                  + (" (exact)" if verdict.exact else ""),
                  *_twin_lines(found),
                  f"  - files changed: {', '.join(found.first_different.files[:25]) or 'none'}"
                  + (" …" if len(found.first_different.files) > 25 else ""),
                  f"- compare: {compare_url(found.last_same.hash, found.first_different.hash)}",
                  *_found_pair(found)]
    result = found.answer_level.result
    if result is not None and result.ambiguous:
        names = [found.probed_candidates[k].short if k in found.probed_candidates else k[:10] for k in result.ambiguous]
        more = f" and {len(names) - 20} more" if len(names) > 20 else ""
        lines.append(f"- skipped between them (any could hold the change): {', '.join(names[:20])}{more}")
    unprobed = sum(len(level.unprobed) for level in found.levels)
    if unprobed:
        lines.append(f"- {unprobed} commits were left unrun: the search stopped probing after "
                     "its budget of skipped probes (commits that cannot run on the builds at hand)")
    off_line = found.levels[0].commit_range.off_line
    if off_line:
        lines.append(f"- on the older tag's branch, not on the line searched: {', '.join(c[:10] for c in off_line[:20])}"
                     + (f" and {len(off_line) - 20} more" if len(off_line) > 20 else ""))
    for level in found.levels:
        if level.old_end_taken:
            taken = found.probed_candidates.get(level.old_end_taken)
            lines.append(f"- the old end {taken.short if taken else level.old_end_taken[:10]} was not run: the "
                         "change lies between two commits the search ran, so the answer does not rest on it")
    for level in found.levels[1:]:
        lines.append(f"- {level.commit_range.shape}" + (f": {level.problem.message}" if level.problem else ""))
    if found.tie_break is not None and found.tie_break.kind in ("python", "python-both", "build-dependent",
                                                                     "build-dependent-older", "untested-elsewhere"):
        lines += [f"- {_python_sentence(found.tie_break)}", *_evidence_lines(found.tie_break)]
    elif found.tie_break is not None and found.tie_break.kind == "unknown":
        lines += _evidence_lines(found.tie_break)
    cannot = [k for k, seen in found.observations.items() if seen.found.jax_cannot_run]
    if cannot:
        lines.append(f"- {len(cannot)} probes where JAX itself could not run were counted as neither good nor bad: "
                     + "; ".join(f"{k[:10]}: {found.observations[k].found.jax_cannot_run}" for k in cannot[:3]))
    lines += _runnability_line(found)
    if found.compiled is not None:  # (not-in-python returned above, with its own compiled lines)
        lines += [*_compiled_lines(found), *_lead_lines(found)]
    return lines


def _undecided(found: CommitFinding, old_word: str, new_word: str) -> list[str]:
    """Neither the binary nor a commit: the range where the probes switched builds, and the probes that ran."""
    why = found.tie_break.why if found.tie_break else ""
    if found.last_same is None or found.first_different is None:
        return [f"- Neither the binary nor a commit is named: {why}."]
    last, first = found.last_same, found.first_different
    return [f"- Neither the binary nor a commit is named: {why}.",
            f"- the range: last {old_word} {last.hash[:10]} (jaxlib {found.answer_build('last_same') or '?'}) … "
            f"first {new_word} {first.hash[:10]} (jaxlib {found.answer_build('first_different') or '?'}), "
            f"\"{first.title[:80]}\": where the probes switched builds, not a cause",
            f"- compare: {compare_url(last.hash, first.hash)}"]


def _stopped(found: CommitFinding) -> list[str]:
    """Why the commits were not searched: an end that could not run is said so, never as another outcome."""
    problem = found.levels[0].problem
    if problem is None or problem.kind != "untestable" or problem.end is None:
        return [f"- The range's ends did not behave as the releases did: {problem.message if problem else ''}."]
    candidate = found.probed_candidates.get(problem.end)
    seen = found.observations.get(problem.end)
    side = "old" if problem.end == found.levels[0].candidates[0].version else "new"
    name = candidate.short if candidate else problem.end[:10]
    if seen is not None and seen.found.status == Status.RAN and not seen.found.jax_cannot_run:
        # JAX ran there and the check could not tell: that is the check's answer, not the end's fault (a check that
        # matched the reported error word for word read "could not run here" on every commit printing another repr).
        return [f"- The range's {side} end {name} ran, and the check was inconclusive there ({seen.found.reason}), "
                "so no commit between the releases was searched from it: the check cannot tell the bug at that end, "
                "not JAX that could not run."]
    if seen is not None:
        why = seen.found.jax_cannot_run or seen.found.reason
    else:
        why = candidate.problem if candidate else ""
    return [f"- The range's {side} end {name} could not run here"
            f"{f' ({why})' if why else ''}, so no commit between the releases was searched from it."]


def _binary_answer(found: CommitFinding, old_word: str, new_word: str) -> list[str]:
    """Not in JAX's Python, or the build matters with a span untested: each with the probes it rests on."""
    tie = found.tie_break
    if found.verdict is CommitVerdict.BUILD_MATTERS:
        assert tie is not None
        return [f"- {tie.why[0].upper()}{tie.why[1:]}.", *_evidence_lines(tie), *_compiled_lines(found),
                *_lead_lines(found)]
    lines = [f"- {_binary_sentence(tie)}", *_evidence_lines(tie), *_compiled_lines(found), *_lead_lines(found)]
    if found.last_same is not None and found.first_different is not None:
        lines.append(f"- where the search's probes switched builds (not a cause): {found.last_same.hash[:10]} "
                     f"({old_word}) → {found.first_different.hash[:10]} ({new_word})")
    return lines


def _runnability_line(found: CommitFinding) -> list[str]:
    """Where "which commit runs on which build" came from: this run's checks, or what earlier runs kept."""
    asked, seconds = found.runnable_checks
    if asked:
        return [f"- {asked} (commit, jaxlib) pairs were laid over only to ask whether JAX runs there "
                f"({seconds:.1f} s): which commits run on which build was found by this run's runnability checks"]
    placed = any(c.build is not None for level in found.levels for c in level.candidates)
    return ["- which commits run on which build: from the probe cache (pairs kept by earlier runs in "
            "reports/bisect/runnable/), no pair was laid over to ask"] if placed and len(found.builds) > 1 else []


def _twin_lines(found: CommitFinding) -> list[str]:
    """The commit's twins, either way: a cherry-pick's on the main line (where its pull request and review are), a
    main-line commit's copies on release branches (a release that holds the change sooner)."""
    if found.main_line is None:
        if not found.branch_copies:
            return []
        main = _released(found.released[0])
        return [f"  - on the main line, {main}; a copy on a release branch ({how}): {_named(info, None)}; "
                f"{_released(release)}" for info, how, release in found.branch_copies]
    info, how = found.main_line
    branch, main = (_released(v) for v in found.released)
    return [f"  - a release branch's copy, {branch}; on the main line ({how}): {_named(info, None)}; {main}"]


def _released(version: str | None) -> str:
    return f"first released in jax {version}" if version else "in no release tagged here yet"


def _named(info: CommitInfo, jaxlib: str | None) -> str:
    pr = f", PR #{info.pr} ({info.pr_url})" if info.pr else ""
    on = f"; probed on jaxlib {jaxlib}" if jaxlib else ""
    return f"**{info.hash}** \"{info.title}\" — {info.author}, {info.date}{pr} — {commit_url(info.hash)}{on}"


def _binary_sentence(tie: TieBreak | None) -> str:
    why = tie.why if tie is not None else ""
    return f"Not in JAX's Python: {why}; the change is in the compiled jaxlib."


def _python_sentence(tie: TieBreak) -> str:
    if tie.kind in ("build-dependent", "build-dependent-older"):
        return f"Build dependence: {tie.why}."
    if tie.kind == "untested-elsewhere":
        return f"Whether it needs this build is untested: {tie.why}."
    if tie.kind == "python-both":
        return f"The same pair on the range's other build: {tie.why}."
    return f"The probes switched jaxlib builds at this commit, so it was run on the other build too: {tie.why}."


def _found_pair(found: CommitFinding) -> list[str]:
    """The pair the commit answer rests on: its parent and itself, each with the build it ran on and its outcome."""
    result = found.answer_level.result
    if result is None:
        return []
    probes = []
    for key in (result.last_same, result.first_different):
        outcome = found.outcome_of(key)
        laid = f" ({found.laid_of(key)})" if found.laid_of(key) else ""
        probes.append(f"{_commit_of(found, key)[:10]} on jaxlib {found.build_of(key) or '?'}{laid}: "
                      f"{outcome.value if outcome else '?'}")
    apart = found.laid_apart
    apart_line = [f"  - laid apart: {apart[0]} for the first, {apart[1]} for the second (the build cannot run the "
            "commit's jaxlib Python past there), so the change may follow what was laid: a range, not a commit"] \
        if apart else []
    return [f"  - probe pair: {'; '.join(probes)}", *apart_line]


def _commit_of(found: CommitFinding, key: str) -> str:
    candidate = found.probed_candidates.get(key)
    return candidate.commit if candidate else key


def _evidence_lines(tie: TieBreak | None) -> list[str]:
    """The probes a claim rests on, beside it."""
    if tie is None or not tie.evidence:
        return []
    return [f"  - probes: {'; '.join(probe.text() for probe in tie.evidence)}"]


def _compiled_lines(found: CommitFinding) -> list[str]:
    compiled = found.compiled
    assert compiled is not None
    files = ", ".join(compiled.compiled_files[:30]) or "none"
    more = f" (and {len(compiled.compiled_files) - 30} more)" if len(compiled.compiled_files) > 30 else ""
    versions = found.extension_versions
    binary = (f" (extension version {versions.get(compiled.old_jaxlib) or '?'} → "
              f"{versions.get(compiled.new_jaxlib) or '?'})" if versions else "")
    return [f"- jaxlib releases: {compiled.old_jaxlib} → {compiled.new_jaxlib}{binary}",
            f"- XLA revision at the two ends: {compiled.old_xla or 'not pinned'} → {compiled.new_xla or 'not pinned'}"
            + (f": {compiled.xla_compare}" if compiled.xla_compare else ""),
            f"- non-Python files under jaxlib/ changed in the range: {files}{more}"] + (
        [f"- patches JAX's build lays on XLA, changed in the range: {', '.join(compiled.xla_patches)}"
         + (" (the XLA revision is the same at both ends: these are the compiled change)"
            if compiled.old_xla and compiled.old_xla == compiled.new_xla else "")]
        if compiled.xla_patches else [])


def _lead_lines(found: CommitFinding) -> list[str]:
    """JAX commits in the range worth reading first: leads, not an answer."""
    lines = [f"- lead (read first, not an answer): {lead.commit[:10]} \"{lead.title[:80]}\" — {lead.why}"
             for lead in found.leads]
    if not found.leads:
        lines.append("- no JAX commit in the range gates on the new binary version or says which issue it fixes")
    if found.leads_note:
        lines.append(f"- {found.leads_note}")
    return lines


def _probe_rows(found: CommitFinding, crash: str, script: bool) -> Sequence[str]:
    """Commits run now, and the known ones that frame the answer (the JSON report lists every one)."""
    result = found.answer_level.result
    framing = {found.levels[0].candidates[0].version, found.levels[0].candidates[-1].version}
    if result is not None:
        framing |= {result.last_same, result.first_different}
    if found.tie_break is not None and found.tie_break.probe is not None:
        framing.add(found.tie_break.probe.version)
    shown = [k for k in found.observations if k in framing or k in found.commit_probes]
    rows = []
    for key in shown:
        seen = found.observations[key]
        candidate = found.probed_candidates.get(key)
        outcome = found.outcome_of(key)
        text = label(outcome, seen, crash, script) if outcome is not None else seen.found.status
        hows: dict[str, str] = {Source.CACHE: f"probe cache ({seen.came_from.by or 'earlier run'})",
                                Source.RELEASE: "the release's own probe"}
        how = hows.get(seen.came_from.source, f"run ({seen.installed.environment or 'no'} environment)")
        title = (candidate.title if candidate else "").replace("|", "\\|")[:70]
        laid = f" ({found.laid_of(key)})" if found.laid_of(key) else ""
        rows.append(f"| {candidate.short if candidate else key[:10]} | {(candidate.date if candidate else '')[:10]} "
                    f"| {title} | {seen.installed.jaxlib or '—'}{laid} | {text} | {how} | {seen.cost.seconds:.1f} |")
    hidden = len(found.observations) - len(shown)
    if hidden:
        rows.append(f"\n{hidden} more commits were known before this run (probe cache) and narrowed the search; "
                    "the JSON report lists them.")
    return rows
