"""What a bisect report is written from besides the finding: where it goes, the script, the paths, the notes.

The finding says what was found; the report also quotes the script that was
bisected (`kit.bisect.report.summary`), names every path as the thread can read it
(relative to the project or ``~``: `kit.user_paths.report_path`), and quotes
the release notes that matter. This module gathers those from the matrix and
the driver's specs (`kit.bisect.specs`), so the driver only asks for them.
"""

from __future__ import annotations

import re

from pathlib import Path

from packaging.version import Version

from ...config import Matrix
from ...errors import KitError
from ...history.commit_range import tag
from ...history.commits import read_text
from ...history.source import History, open_history
from ...install import PackageIndex
from ...run.child_processes import REPO_ROOT
from ...user_paths import report_path
from . import changelog
from .changelog import CHANGELOG_NAME
from .changelog_entries import error_terms, script_terms
from .finding import BisectFinding
from ..specs import HowToSearch, Specs, WhatRuns, WhatToReport
from .markdown import machine_paths, release_versions
from .summary import BisectedScript, bisected_script, deciding_probes


def reports_dir(matrix: Matrix, report: WhatToReport) -> Path:
    """Where bisect-<name>.md and .json go: --out, else the reports folder beside the records."""
    return report.out or matrix.layout.reports


def shown_paths(matrix: Matrix, specs: Specs) -> dict[str, str]:
    """Absolute paths a report may quote (in a probe's traceback, say) and how it names them instead."""
    report = specs.report
    given = [path for path in (specs.runs.script, specs.search.jax_repo, report.changelog, report.out, REPO_ROOT)
             if path is not None]
    return machine_paths(matrix.path.parent, given)


def script_path(matrix: Matrix, runs: WhatRuns) -> Path | None:
    """The script bisected: --script's, a check block's, or the built-in check's repro module."""
    if runs.script is not None or not runs.check:
        return runs.script
    return matrix.check(runs.check).script or REPO_ROOT / "repro" / f"{runs.check}.py"


def bisected(matrix: Matrix, runs: WhatRuns) -> BisectedScript | None:
    """The script as the report quotes it (or names it by path and hash)."""
    path = script_path(matrix, runs)
    return bisected_script(path, report_path(path, matrix.path.parent)) if path is not None else None


def release_notes(matrix: Matrix, finding: BisectFinding, index: PackageIndex, history: History | None) -> list[str]:
    """The notes of the releases the change can lie in: from the clone when there is one (--commits, --jax-repo or
    [install] jax_repo), else --changelog, else fetched; only the entries that mention the terms."""
    versions = release_versions(finding)
    given = finding.specs.report.changelog
    history = history or notes_history(matrix, finding.specs.search)
    return changelog.release_notes(versions, index.cache_dir, given,
                                   text=clone_changelog(history, versions) if given is None else None,
                                   looking_for=notes_terms(matrix, finding.specs.runs, finding))


def notes_history(matrix: Matrix, search: HowToSearch) -> History | None:
    """Without --commits, the clone named by --jax-repo or [install] jax_repo, for its CHANGELOG.md: read only,
    nothing fetched or cloned (None when neither names one, or it cannot be read: the notes are fetched then)."""
    given = search.jax_repo or matrix.jax_repo
    if given is None:
        return None
    try:
        return open_history(given, "--jax-repo" if search.jax_repo else "matrix.toml's [install] jax_repo",
                            given, lambda _line: None, shown=report_path(given, matrix.path.parent))
    except KitError:
        return None


def clone_changelog(history: History | None, versions: list[str]) -> str | None:
    """CHANGELOG.md as it stood at the newest release asked for, from the clone (None without one)."""
    if history is None or not versions:
        return None
    newest = max(versions, key=Version)
    return unreleased_as(read_text(history, tag(newest), CHANGELOG_NAME), newest)


def unreleased_as(text: str | None, version: str) -> str | None:
    """CHANGELOG.md at ``version``'s tag, its ``## Unreleased`` section named for ``version`` where the file has
    no section of its own for it: many tags (0.6.2, 0.7.x, 0.10.x, 0.11.0) were cut before the heading was renamed."""
    if text is None or re.search(rf"(?mi)^## jax(?:lib)? v?{re.escape(version)}\b", text):
        return text
    return re.sub(r"(?m)^## Unreleased\s*$", f"## jax {version}", text, count=1)


def notes_terms(matrix: Matrix, runs: WhatRuns, finding: BisectFinding) -> list[str]:
    """What the release notes are searched for: the script's JAX names, the issues it cites, the error."""
    path = script_path(matrix, runs)
    text = _read(path) if path is not None else ""
    errors = [seen.found.exception for _name, _word, seen in deciding_probes(finding)]
    return list(dict.fromkeys([*script_terms(text), *(t for e in errors for t in error_terms(e))]))


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""
