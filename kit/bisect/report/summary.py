"""The top of a bisect report: a summary to paste as a comment, then the script that was bisected.

The thread a report is pasted into wants the answer first: the release (and
commit, with its pull request), the command that reproduces it, what it ran
on, and what the two deciding probes (the last with the old outcome, the
first with the new one) printed. That fits in :data:`SUMMARY_LINES` lines;
everything else of the report follows, folded. The same lines end a quiet
console. Pure: it reads the finding, nothing else.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

from packaging.version import Version

from ...records import Source, Status, Verdict
from ...markdown_text import code
from . import changelog
from ..commits import CommitFinding
from .finding import BisectFinding
from ..observation import Observation

SUMMARY_LINES = 10
"""The summary's most lines, its title included: what fits a comment without scrolling."""

SCRIPT_LINES = 80
"""A script up to this long is quoted whole; a longer one is named by path and hash."""

_QUOTE_CHARS = 200
"""Characters of a deciding probe's line kept in the summary (its whole output is folded below)."""


@dataclass(frozen=True)
class BisectedScript:
    """The script a bisect ran, as the report shows it: quoted when short, else its path and hash."""

    shown: str
    """Its path relative to the project or ``~``."""
    sha256: str
    text: str | None
    """The whole text when it has at most :data:`SCRIPT_LINES` lines; None otherwise (or unreadable)."""
    lines: int = 0


def bisected_script(path: Path, shown: str) -> BisectedScript | None:
    """What the report says of ``path``; None when it cannot be read (the report does without)."""
    try:
        data = path.read_bytes()
    except OSError:
        return None
    text = data.decode("utf-8", errors="replace")
    count = len(text.splitlines())
    return BisectedScript(shown, hashlib.sha256(data).hexdigest(), text if count <= SCRIPT_LINES else None, count)


def script_lines(script: BisectedScript | None) -> list[str]:
    """The report's script section: the text, fenced, or where it is and its hash."""
    if script is None:
        return []
    lines = ["## The script", ""]
    if script.text is not None:
        return lines + [f"`{script.shown}` (sha256 {script.sha256[:16]}):", "", "```python",
                        *script.text.rstrip("\n").splitlines(), "```"]
    return lines + [f"`{script.shown}`: {script.lines} lines, sha256 {script.sha256} (too long to quote here)."]


def summary_lines(finding: BisectFinding) -> list[str]:
    """At most :data:`SUMMARY_LINES` lines, title first: the answer, how to reproduce it, where, the deciding probes."""
    runs = finding.specs.runs
    title = f"# Bisect: {runs.subject} ({runs.backend}): {headline(finding)}"
    lines = [title, "", *_answer(finding), f"- **Reproduce:** {code(finding.reproduce)}"]
    deciding = deciding_probes(finding)
    lines.append(f"- **Environment:** {_environment(finding, [seen for _name, _word, seen in deciding])}")
    for name, word, seen in deciding:
        lines.append(f"- **{word}** ({name}): {_quote(deciding_line(seen, bool(runs.script)))}")
    return lines[:SUMMARY_LINES]


def headline(finding: BisectFinding) -> str:
    """The answer in a few words, for the title."""
    if finding.stopped:
        return "stopped, the bounds did not test as given"
    result = finding.result
    if result is None:
        count = len(finding.transitions)
        return f"the outcome changes {count} time{'' if count == 1 else 's'} (--all)" if count else "no change found"
    verb = "fixed it" if finding.fix else "broke it"
    release = f"jax {result.first_different} {verb}" if result.exact else \
        f"jax {result.first_different} or a release just before it {verb}"
    found = finding.commits
    if found is not None and found.first_different is not None and found.verdict.exact:
        return f"{release}, commit {found.first_different.hash[:10]}"
    return release


def _answer(finding: BisectFinding) -> list[str]:
    if finding.stopped:
        return [f"- **Stopped:** {finding.stopped}"]
    result = finding.result
    if result is None:
        shown = [f"jax {t.before} ({t.outcome_before.value}) → {t.after} ({t.outcome_after.value})"
                 for t in finding.transitions[:4]]
        more = f" and {len(finding.transitions) - 4} more" if len(finding.transitions) > 4 else ""
        return [f"- **Answer:** {', '.join(shown) + more or 'no change of outcome'} (every candidate probed)"]
    old_word, new_word = ("bad", "good") if finding.fix else ("good", "bad")
    exact = "exact" if result.exact else f"or one of {', '.join(result.ambiguous)}, skipped"
    lines = [f"- **Answer:** first {new_word} release **jax {result.first_different}** ({exact}; last {old_word} "
             f"jax {result.last_same}): {changelog.compare_url(result.last_same, result.first_different)}"]
    found = finding.commits
    # "Not in JAX's Python" names where the probes switched builds, no cause: no commit is named for it.
    # Nor where the binary and the Python were not told apart: a range, never a commit in bold (issue 49).
    if found is not None and found.first_different is not None and found.verdict.names_commits:
        info = found.first_different
        pr = f", PR #{info.pr} {info.pr_url}" if info.pr else ""
        lines.append(f"- **Commit** ({found.verdict.short}): **{info.hash[:10]}** \"{info.title[:90]}\" "
                     f"({info.date[:10]}{pr}) {info.url}{_twin_words(found)}")
    elif found is not None:
        lines.append(f"- **Commit:** {found.verdict.short} (see *Commits* below)")
    return lines


def _twin_words(found: CommitFinding) -> str:
    """The named commit's twin, either way, in a clause (issue 58: a branch's fix was named without main's)."""
    if found.main_line is not None:
        return f"; on the main line: {found.main_line[0].hash[:10]} ({_first_in(found.released[1])})"
    return "".join(f"; also on a release branch: {info.hash[:10]} ({_first_in(release)})"
                   for info, _how, release in found.branch_copies)


def _first_in(version: str | None) -> str:
    return f"first in jax {version}" if version else "in no release tagged here yet"


def deciding_probes(finding: BisectFinding) -> list[tuple[str, str, Observation]]:
    """(what was probed, its role, its observation) for the probes the answer rests on: commits when named."""
    old_word, new_word = ("bad", "good") if finding.fix else ("good", "bad")
    found = finding.commits
    if found is not None and found.answer_level.result is not None:
        result = found.answer_level.result
        pairs = [(result.first_different, f"First {new_word}"), (result.last_same, f"Last {old_word}")]
        named = []
        for key, word in pairs:
            seen = found.observations.get(key)
            candidate = found.probed_candidates.get(key)
            if seen is not None:
                short = candidate.short if candidate is not None else key[:10]
                named.append((f"commit {short} on jaxlib {seen.installed.jaxlib or '?'}", word, seen))
        if named:
            return named
    if finding.result is None:
        return []
    pairs = [(finding.result.first_different, f"First {new_word}"), (finding.result.last_same, f"Last {old_word}")]
    return [(f"jax {version}", word, finding.observations[version]) for version, word in pairs
            if version in finding.observations]


def deciding_line(seen: Observation, script: bool) -> str:
    """What a deciding probe ended with: the exception it died of, a script's last line, or the check's reason."""
    if seen.found.exception:
        return seen.found.exception
    if seen.came_from.source is Source.TRIAGE:
        # Judged by the check's judge from triage's capture, whose output holds no verdict line: the judge's
        # words say what decided it (t11: the last printed line quoted, the same on every release).
        return seen.found.reason
    if script and seen.came_from.output_tail:
        return seen.came_from.output_tail[-1]
    return seen.found.reason


def _quote(text: str) -> str:
    text = " ".join(text.split())
    text = text if len(text) <= _QUOTE_CHARS else text[:_QUOTE_CHARS - 1] + "…"
    return "`" + text.replace("`", "'") + "`"


def _environment(finding: BisectFinding, seen: list[Observation]) -> str:
    """Backend, Python, and the versions of jaxlib, numpy and scipy the deciding probes ran with."""
    parts = [finding.specs.runs.backend]
    for name in ("python", "jaxlib", "numpy", "scipy"):
        values = {value for o in seen if (value := _installed(o, name))}
        if values:
            parts.append(f"{name} {' / '.join(sorted(values, key=_loose_version))}")
    what = f"check `{finding.specs.runs.check}`" if finding.specs.runs.check else \
        f"script `{finding.specs.report.script_shown or finding.specs.runs.script}`"
    # What the probes held (--pin), as each observation says: a remembered probe was held the same (its identity)
    pins = sorted({pin for o in finding.observations.values() for pin in o.installed.pins})
    if pins:
        what += f", holding {', '.join(pins)}"
    return f"{', '.join(parts)}; {what}"


def _installed(seen: Observation, name: str) -> str | None:
    """What a probe ran with: its Python, or a package's version (jaxlib also from the probe's own field)."""
    if name == "python":
        return seen.installed.python
    return seen.installed.packages.get(name) or (seen.installed.jaxlib if name == "jaxlib" else None)


def _loose_version(text: str) -> tuple[int, Version | str]:
    try:
        return (0, Version(text))
    except ValueError:
        return (1, text)


def console_tail(finding: BisectFinding, lines: int = 3) -> list[str]:
    """For a quiet console: the last ``lines`` lines of each deciding probe that failed (its traceback's end)."""
    shown: list[str] = []
    for name, word, seen in deciding_probes(finding):
        failed = seen.found.exception or seen.found.status != Status.RAN or (finding.specs.runs.script and seen.found.verdict == Verdict.AFFECTED)
        if failed and seen.came_from.output_tail:
            shown += [f"  {word.lower()} {name}, last lines{f' ({seen.came_from.log})' if seen.came_from.log else ''}:",
                      *(f"    {line}" for line in seen.came_from.output_tail[-lines:])]
    return shown
