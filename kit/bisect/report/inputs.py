"""What a bisect report is written from besides the finding: where it goes, the script, the paths, the notes.

The finding says what was found; the report also quotes the script that was
bisected (`kit.bisect.report.summary`), names every path as the thread can read it
(relative to the project or ``~``: `kit.user_paths.report_path`), and quotes
the release notes that matter. This module gathers those from the matrix and
the options, so the driver only asks for them.
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
from .finding import Finding
from ..options import Options
from .markdown import machine_paths, release_versions
from .summary import BisectedScript, bisected_script, deciding_probes


def reports_dir(matrix: Matrix, options: Options) -> Path:
    """Where bisect-<name>.md and .json go: --out, else the reports folder beside the records."""
    return options.out or matrix.layout.reports


def shown_paths(matrix: Matrix, options: Options) -> dict[str, str]:
    """Absolute paths a report may quote (in a probe's traceback, say) and how it names them instead."""
    given = [path for path in (options.script, options.jax_repo, options.changelog, options.out, REPO_ROOT)
             if path is not None]
    return machine_paths(matrix.path.parent, given)


def script_path(matrix: Matrix, options: Options) -> Path | None:
    """The script bisected: --script's, a check block's, or the built-in check's repro module."""
    if options.script is not None or not options.check:
        return options.script
    return matrix.check(options.check).script or REPO_ROOT / "repro" / f"{options.check}.py"


def bisected(matrix: Matrix, options: Options) -> BisectedScript | None:
    """The script as the report quotes it (or names it by path and hash)."""
    path = script_path(matrix, options)
    return bisected_script(path, report_path(path, matrix.path.parent)) if path is not None else None


def release_notes(matrix: Matrix, finding: Finding, index: PackageIndex, history: History | None) -> list[str]:
    """The notes of the releases the change can lie in: from the clone when there is one (--commits, --jax-repo or
    [install] jax_repo), else --changelog, else fetched; only the entries that mention the terms."""
    versions = release_versions(finding)
    options = finding.options
    history = history or notes_history(matrix, options)
    return changelog.release_notes(versions, index.cache_dir, options.changelog,
                                   text=clone_changelog(history, versions) if options.changelog is None else None,
                                   looking_for=notes_terms(matrix, options, finding))


def notes_history(matrix: Matrix, options: Options) -> History | None:
    """Without --commits, the clone named by --jax-repo or [install] jax_repo, for its CHANGELOG.md: read only,
    nothing fetched or cloned (None when neither names one, or it cannot be read: the notes are fetched then)."""
    given = options.jax_repo or matrix.jax_repo
    if given is None:
        return None
    try:
        return open_history(given, "--jax-repo" if options.jax_repo else "matrix.toml's [install] jax_repo",
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


def notes_terms(matrix: Matrix, options: Options, finding: Finding) -> list[str]:
    """What the release notes are searched for: the script's JAX names, the issues it cites, the error."""
    path = script_path(matrix, options)
    text = _read(path) if path is not None else ""
    errors = [seen.found.exception for _name, _word, seen in deciding_probes(finding)]
    return list(dict.fromkeys([*script_terms(text), *(t for e in errors for t in error_terms(e))]))


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""
