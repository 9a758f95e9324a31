"""Confirm one candidate: its changed tests run at the fix and at its parent, on one build, each side in one pytest.

Both sides run the fix's version of the test files (with the fix's
``conftest.py`` and ``pyproject.toml``: JAX's pytest settings, warnings as
errors included); what differs is the Python laid over the build
(`kit.install.overlay`): the fix's, then the parent's, in the same form. The
form is the commit search's (`kit.install.overlay.LAID_FORMS`): the commit's
jaxlib Python with its ``jax/`` where JAX imports and runs so, else ``jax/``
alone. Each side is kept in the store as soon as its process ends; the parent's is not run where
no test passed at the fix (its outcome could confirm none of them).
"""

from __future__ import annotations

import shutil
import time
from dataclasses import dataclass
from pathlib import Path

from ... import scratch
from ...history.export import export_files
from ...history.git import GitFailed, git
from ...history.source import History
from ...history.version_file import parse_version_file
from ...install import JAX_ALONE, LAID_FORMS, Prepared, commit_version, fill_bytecode, new_overlay_folder, \
    over_release, remove_overlay
from ...json_types import JsonObject, as_object
from ...run.jax_runs import jax_runs
from .candidates import HarvestCandidate
from .changed_tests import TestFunction, changed_tests
from .pytest_run import NOT_RUN, PASSED, UNCOLLECTED, TestOutcome, run_side
from .store import FIX, PARENT, BuildKey, Store
from .verdicts import commit_result, test_verdict

PARENT_SKIPPED = "not run: no test passed at the fix, so the parent could not confirm any"
"""Why a parent's side is absent: its outcome would change no verdict (each test is unrun by the fix's outcome)."""

HARNESS_FILES = ("tests", "conftest.py", "pyproject.toml")
"""What of the fix commit the tests run from: the tests, and JAX's pytest configuration beside them."""


@dataclass(frozen=True)
class HarvestBuild:
    """The release environment both sides run on (the harness installed), and the key probes name it by."""

    prepared: Prepared
    key: BuildKey
    bytecode: Path


def confirm(history: History, candidate: HarvestCandidate, build: HarvestBuild, store: Store) -> JsonObject:
    """The commit's result (`kit.known.harvest.verdicts.commit_result`), kept in ``store``."""
    started = time.monotonic()
    tests = changed_tests(history, candidate.commit, candidate.parent, candidate.test_files)
    problem = "" if tests else "it adds or changes no test function (only helpers, data or deletions)"
    problem = problem or _not_accepted(history, candidate, build.key.jaxlib)
    laid, sides = "", dict[str, dict[str, TestOutcome]]()
    if not problem:
        with scratch.folder("harvest") as workdir:
            export_files(history, candidate.commit, HARNESS_FILES, workdir)
            laid, sides, problem = _both_sides(history, candidate, build, store, tests, workdir)
    rows = [_row(test, sides) for test in tests] if sides else []
    result = {**commit_result(candidate, build.key.to_json(), laid, rows, time.monotonic() - started, problem),
              "build_tag": build.key.tag}
    store.put_result(candidate.commit, result)
    return result


def _not_accepted(history: History, candidate: HarvestCandidate, jaxlib: str) -> str:
    for commit in (candidate.commit, candidate.parent):
        try:
            accepted = parse_version_file(git(history.path, "show", f"{commit}:jax/version.py"))
        except GitFailed:
            accepted = None
        if accepted is None or not accepted.accepts(jaxlib):
            return f"{commit[:10]}'s jax/version.py does not accept jaxlib {jaxlib} ({accepted or 'no range'})"
    return ""


def _both_sides(history: History, candidate: HarvestCandidate, build: HarvestBuild, store: Store, tests: list[TestFunction],
                workdir: Path) -> tuple[str, dict[str, dict[str, TestOutcome]], str]:
    """``(form laid, {side: {node id: outcome}}, problem)``: each side from the store, else run now and kept."""
    sides: dict[str, dict[str, TestOutcome]] = {}
    laid = ""
    for side, commit in ((FIX, candidate.commit), (PARENT, candidate.parent)):
        if side == PARENT and not any(o.outcome == PASSED for o in sides[FIX].values()):
            break  # no test passed at the fix: the parent's outcome cannot make any of them an entry
        kept = store.probe(candidate.commit, side, build.key)
        shown = as_object(kept.get("tests")) if kept is not None else {}
        if kept is not None and all(t.node_id in shown for t in tests):
            laid = str(kept.get("laid", ""))
            sides[side] = {node: TestOutcome.of(data) for node, data in shown.items()}
            continue
        folder = new_overlay_folder()
        try:
            laying = time.monotonic()
            laid, prepared, why = _laid(history, commit, candidate.date, build, folder, laid)
            lay_seconds = time.monotonic() - laying
            if prepared is None:
                return laid, {}, f"JAX cannot run at {side} {commit[:10]} on jaxlib {build.key.jaxlib}: {why}"
            assert prepared.environment is not None
            ran = run_side(prepared.environment, workdir, tests)
        finally:
            remove_overlay(folder)
        sides[side] = ran.outcomes
        store.put_probe(candidate.commit, side, build.key, {
            "commit_run": commit, "laid": laid, "seconds": round(ran.seconds, 1), "exit_code": ran.exit_code,
            "lay_seconds": round(lay_seconds, 1),
            "problem": ran.problem, "at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "tests": {node: outcome.to_json() for node, outcome in ran.outcomes.items()}})
    return laid, sides, ""


def _laid(history: History, commit: str, date: str, build: HarvestBuild, folder: Path,
          form: str) -> tuple[str, Prepared | None, str]:
    """``commit`` laid over the build in ``form`` (none yet: the first of `LAID_FORMS` where JAX runs)."""
    forms = (form,) if form else LAID_FORMS
    accepted = parse_version_file(git(history.path, "show", f"{commit}:jax/version.py"))
    assert accepted is not None  # checked by _not_accepted
    why = ""
    for laid in forms:
        for entry in list(folder.iterdir()):
            scratch_clear(entry)
        prepared = over_release(build.prepared, history, commit, commit_version(accepted, date, commit), folder, laid)
        assert prepared.environment is not None
        fill_bytecode(prepared.environment.python, folder, build.bytecode)
        if form:
            return laid, prepared, ""  # the parent, in the fix's form: a JAX that cannot import is its pytest's to say
        runs = jax_runs(prepared.environment)
        if runs.ok:
            return laid, prepared, ""
        why += f"{'; ' if why else ''}with {laid}: {runs.error}"
    return forms[-1] if forms else JAX_ALONE, None, why


def scratch_clear(entry: Path) -> None:
    """Empty the overlay folder between two forms (links are removed, never followed)."""
    if entry.is_symlink() or entry.is_file():
        entry.unlink()
    else:
        shutil.rmtree(entry)


def _row(test: TestFunction, sides: dict[str, dict[str, TestOutcome]]) -> JsonObject:
    fix = sides.get(FIX, {}).get(test.node_id, TestOutcome(UNCOLLECTED, 0, "not run"))
    parent = sides.get(PARENT, {}).get(test.node_id, TestOutcome(NOT_RUN, 0, PARENT_SKIPPED) if FIX in sides
                                       else TestOutcome(UNCOLLECTED, 0, "not run"))
    verdict, why = test_verdict(fix, parent)
    return {"node_id": test.node_id, "verdict": verdict, "why": why[:1000],
            "at_fix": fix.to_json(), "at_parent": parent.to_json()}
