"""The kit's own files, watched while a check runs: a check that changes them is said, and its verdict not trusted.

A check is a stranger's script. It runs in its scratch folder, but nothing
stops it from rewriting a record in ``reports/results``, deleting
``matrix.md`` or editing ``matrix.toml``; the report then shows a verdict
its own evidence contradicts. `watching` stats those files (and the kit's and
the repros' sources) before and after the run, a few milliseconds, and a
change becomes one sentence in the log and the record's reason, and the run
``inconclusive``. Records other runs add meanwhile (a bisect's ``--jobs``)
are new files, never a change to one that was there.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Callable

from ..records import RunOutcome
from ..config import Matrix
from ..user_paths import shown_path
from ..package_files import repro_root
from .child_processes import REPO_ROOT

Stamp = tuple[int, int, int]
"""A file's modification time (ns), size and inode: any rewrite, even in place or by rename, changes one."""

SHOWN = 5
"""How many changed files a sentence names (the record's evidence has them all)."""


def watching(matrix: Matrix, log: Callable[[str], None], run: Callable[[], RunOutcome]) -> RunOutcome:
    """``run()``'s outcome; made inconclusive, with one sentence, where the kit's files changed meanwhile."""
    before = _stamps(matrix)
    outcome = run()
    changed = [f"{shown_path(path, matrix.path.parent)} ({what})" for path, what in _changes(before)]
    if not changed:
        return outcome
    log(f"WARNING: {_sentence(changed)}")
    return kit_files_changed(outcome, changed)


def kit_files_changed(outcome: RunOutcome, changed: list[str]) -> RunOutcome:
    """A run that changed the kit's own files (``changed``, as the sentence names them): a named step. Its verdict
    is not trusted (inconclusive, where it ran), its reason says so first, its evidence lists them all."""
    reason = _sentence(changed) + (f"; it said: {outcome.reason}" if outcome.reason else "")
    told = outcome.inconclusive(reason) if outcome.ran else outcome.with_reason(reason)
    return told.with_evidence(kit_files_changed=changed)


def _sentence(changed: list[str]) -> str:
    more = f" and {len(changed) - SHOWN} more" if len(changed) > SHOWN else ""
    return (f"the check changed the kit's own files while it ran: {', '.join(changed[:SHOWN])}{more}; "
            "so its verdict is not trusted (restore them, e.g. git checkout / git status, and run it again)")


def _watched(matrix: Matrix) -> list[Path]:
    """matrix.toml, the reports, every record already written, and the sources of the kit and the repros."""
    layout = matrix.layout
    files = [matrix.path, layout.reports / "matrix.md", layout.reports / "matrix.json",
             *sorted((REPO_ROOT / "known").glob("*.toml"))]  # the catalogue the report cites
    for folder in (layout.results, layout.script_records, layout.commit_records, layout.triage_records):
        files += sorted(folder.glob("*.json"))
    # An installed kit's children import repro/ from its copy in the user cache (`package_files.repro_root`).
    for source in dict.fromkeys((REPO_ROOT / "kit", REPO_ROOT / "repro", repro_root() / "repro")):
        files += sorted(source.rglob("*.py"))
    return files


def _stamps(matrix: Matrix) -> dict[Path, Stamp | None]:
    return {path: _stamp(path) for path in _watched(matrix)}


def _stamp(path: Path) -> Stamp | None:
    try:
        found = os.stat(path)
    except OSError:
        return None
    return (found.st_mtime_ns, found.st_size, found.st_ino)


def _changes(before: dict[Path, Stamp | None]) -> list[tuple[Path, str]]:
    changes = []
    for path, then in before.items():
        now = _stamp(path)
        if now != then:
            changes.append((path, "deleted" if now is None else "created" if then is None else "changed"))
    return changes
