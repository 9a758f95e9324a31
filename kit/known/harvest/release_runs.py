"""Harvested entries' confirmed tests on one release, no overlay: one pytest process (an audit's: one per core).

Each entry's test files are taken as of its fix commit (with that commit's
``conftest.py``) into a folder of their own, so two entries' versions of one
file sit side by side (pytest's ``importlib`` import mode keeps them apart);
the release's own ``pyproject.toml`` gives pytest its settings, and the
release's environment with JAX's test harness of its era runs them
(`kit.known.harvest.harness`). Where the fix's copy of a file does not import
on the release (a helper it lacks), that release's own copy of the file runs
instead, where the release has it: the probe says which copy ran, and a copy
that is not the fix's version of the test (the test as it was before the fix
changed it) decides nothing.

A test says *present* where it fails as it failed at the fix's parent (the
same exception and, for a message check, the same expected text:
`kit.known.harvest.failure_signatures.failure_signature`; never a test whose parent lacked
only a helper the fix added), *absent* where it passes, and nothing otherwise: skipped,
not collected, or a failure of another kind (an API the release lacks) is
*untested*, never counted either way. An entry is present where one of its
confirmed tests is, absent where all of them are.
"""

from __future__ import annotations

import re
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from ... import scratch
from ...history.export import export_files
from ...history.git import GitFailed, git
from ...history.source import History
from ...install import Environment, release_bytecode_env
from ...json_types import JsonObject
from ..measured import Presence
from .changed_tests import TestFunction
from .failure_signatures import failure_signature, lacks_new_helper
from .function_trees import FunctionTrees, blob_at
from .kept_tests import kept_file, kept_root, lay_out
from .pytest_run import FAILED, PASSED, UNCOLLECTED, Entry, SideRun, TestOutcome, ended_early, run_side
from .reused_compiles import drop_unreadable, keep_not_passing, not_passing_before
from .shared_out import cores, run_shared_out

FIX_COPY, RELEASE_COPY = "fix", "release"
NOT_THE_FIXS = "the release's own copy is another test: not run"
OTHER_TEST = "another test"
"""A release's own copy of a test that is not the fix's version of it: its outcome decides nothing."""


Placement = dict[tuple[str, str], tuple[str, TestFunction]]
"""``(entry id, node id) -> (the commit or tag whose copy of the file runs the test, the test)``."""
Outcomes = dict[str, dict[str, TestOutcome]]
"""``{entry id: {node id: outcome}}``."""
FIRST_SECONDS, PLAIN_SECONDS, AGAIN_SECONDS = "test-seconds.json", "test-seconds-plain.json", "test-seconds-again.json"
"""Where an audit keeps its files' seconds: of its first run with reused compiles, of its first run without, and
of the runs after them (one file's seconds differ among them: with reused compiles or not, all its tests or a
few)."""


@dataclass(frozen=True)
class RangeEntry:
    """What a release probe needs of a confirmed entry: its fix, its tests and how each failed at the parent."""

    id: str
    commit: str
    tests: tuple[TestFunction, ...]
    parent_messages: tuple[str, ...]


@dataclass(frozen=True)
class ReleaseProbe:
    """One entry on one release: the presence, why, the copy of the tests that ran, each test's outcome."""

    release: str
    outcome: Presence
    reason: str
    copy: str
    tests: dict[str, TestOutcome]
    seconds: float

    def to_json(self) -> JsonObject:
        return {"release": self.release, "outcome": self.outcome.value, "reason": self.reason, "copy": self.copy,
                "tests": {node: outcome.to_json() for node, outcome in self.tests.items()},
                "seconds": round(self.seconds, 1), "at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}


def test_presence(outcome: TestOutcome, parent_message: str) -> tuple[Presence, str]:
    """One test's presence on a release (see the module's docstring), and why."""
    if outcome.outcome == PASSED:
        return Presence.ABSENT, "passes"
    if outcome.outcome == FAILED and lacks_new_helper(parent_message):
        return Presence.UNTESTED, ("fails, but at the parent it failed only for lack of a helper the fix added, "
                                   f"so a failure says nothing of the bug: {outcome.message[:160]}")
    if outcome.outcome == FAILED:
        then, now = failure_signature(parent_message), failure_signature(outcome.message)
        if then == now:
            return Presence.PRESENT, f"fails as at the fix's parent: {outcome.message[:200]}"
        said = f"{now[0] or 'no exception named'}, not {then[0] or 'no exception named'}" if now[0] != then[0] \
            else f"{now[1][:80] or 'another message'}, not {then[1][:80] or 'another message'}" \
            if now[1].startswith("no attribute") or then[1].startswith("no attribute") \
            else f"expected {now[1][:80]!r}, not {then[1][:80]!r}"
        return Presence.UNTESTED, f"fails otherwise than at the fix's parent ({said}): {outcome.message[:200]}"
    return Presence.UNTESTED, f"{outcome.outcome}: {outcome.message[:200]}"


def entry_presence(entry: RangeEntry, outcomes: dict[str, TestOutcome]) -> tuple[Presence, str]:
    """Present where one test is, absent where all are, else untested; with the first test's reason that decided."""
    said = [test_presence(outcomes.get(t.node_id, TestOutcome(UNCOLLECTED, 0, "not run")), message)
            for t, message in zip(entry.tests, entry.parent_messages)]
    for presence in (Presence.PRESENT, Presence.ABSENT):
        found = [why for p, why in said if p is presence]
        if found and (presence is Presence.PRESENT or len(found) == len(said)):
            return presence, found[0]
    return Presence.UNTESTED, next((why for p, why in said if p is Presence.UNTESTED), "no test")


def probe_release(history: History, environment: Environment, release: str, entries: Sequence[RangeEntry],
                  shared: bool = False, compile_cache: Path | None = None) -> list[ReleaseProbe]:
    """Every entry's tests on ``release`` in one pytest process; the release's own copies where the fix's fail
    to import, in a second one. ``shared`` (an audit's): a test file laid out once for the entries whose test it
    holds unchanged (`_placement`), those it fails to serve given their own copies in a process between;
    ``compile_cache`` (an audit's): compiles reused from that folder where no test of the entry looks at
    compiling, and an entry that does not pass every test with them runs again without them
    (`kit.known.harvest.reused_compiles`), its answer that run's."""
    started = time.monotonic()
    trees = FunctionTrees(history, [t for e in entries for t in e.tests],
                          kept_file(environment, "function-trees.json") if shared else None)
    placed = _placement(trees, entries, "", shared)
    first, reused = _first_runs(trees, environment, release, entries, placed, shared, compile_cache)
    # an entry that did not pass at first runs without the cache from the start next time, even where a copy of
    # its own passed after (a later fix's copy that does not import would otherwise run twice more every audit)
    not_passing = {e.id for e in entries if not _passed(first[e.id])}
    retried = _runs_again(trees, environment, release, entries, placed, first, reused) if shared else set()
    if compile_cache is not None and shared:
        keep_not_passing(environment, {e.id for e in entries}, not_passing)
    borrowed = _borrowed(placed, entries, retried) if shared else {}
    tag = f"jax-v{release}"
    uncollected = [e for e in entries if _uncollected(first[e.id])]
    # A release's copy decides only where one of the entry's tests there is the fix's (`_as_evidence`): the others
    # are not run (on 0.11.0, shard_map's 20 cases in 11 s whose outcomes counted for nothing).
    deciding = [e for e in uncollected if any(_same_as_fix(trees, tag, e, t) for t in e.tests)]
    second = _run(trees, environment, release, deciding, _placement(trees, deciding, tag, False), RELEASE_COPY,
                  kept=shared, timings=AGAIN_SECONDS) if deciding else {}
    # said only where the release has a copy at all (t13: said of 96 entries whose release had none of the tests)
    not_run = {e.id for e in uncollected if e not in deciding and any(trees.tree(tag, t) for t in e.tests)}
    seconds = (time.monotonic() - started) / max(len(entries), 1)
    probes = []
    for entry in entries:
        copy = RELEASE_COPY if entry.id in second else FIX_COPY
        outcomes = second.get(entry.id) or first[entry.id]
        if copy == RELEASE_COPY and all(o.outcome == UNCOLLECTED for o in outcomes.values()):
            copy, outcomes = FIX_COPY, first[entry.id]  # the release lacks them too: the fix's failure to import is why
        elif copy == RELEASE_COPY:
            outcomes = _as_evidence(trees, entry, tag, outcomes)
        presence, why = entry_presence(entry, outcomes)
        if entry.id in not_run:
            why += f" ({NOT_THE_FIXS})"
        label = f"fix copy (the fix's test in {borrowed[entry.id]}'s copy of its file)" \
            if copy == FIX_COPY and entry.id in borrowed else f"{copy} copy"
        probes.append(ReleaseProbe(release, presence, f"{label}: {why}", copy, outcomes, seconds))
    trees.save()
    return probes


def _borrowed(placed: Placement, entries: Sequence[RangeEntry],
              retried: set[str]) -> dict[str, str]:
    """``{entry id: the later fix}`` whose copy of a file ran one of the entry's tests (the same function), so a
    reason says which file ran (t13: "fix copy" where the fix's own file did not import on 0.12.1)."""
    borrowed = {}
    for entry in entries:
        later = sorted({placed[entry.id, t.node_id][0] for t in entry.tests} - {entry.commit})
        if later and entry.id not in retried:
            borrowed[entry.id] = later[0][:10]
    return borrowed


def _first_runs(trees: FunctionTrees, environment: Environment, release: str, entries: Sequence[RangeEntry],
                placed: Placement, kept: bool, cache: Path | None) -> tuple[Outcomes, set[str]]:
    """Every entry's tests, and the entries whose run reused compiles (`kit.known.harvest.reused_compiles`; an
    audit's only): not those whose tests look at compiling, nor those that did not pass every test in the last
    audit here (they would run twice): those run without the cache, beside the others, in processes of their own."""
    if cache is None or not kept:
        return _run(trees, environment, release, entries, placed, FIX_COPY, kept=kept), set()
    failing = not_passing_before(environment)
    plain = [e for e in entries if e.id in failing or _looks_at_compiling(trees, placed, e)]
    reused = [e for e in entries if e not in plain]
    with ThreadPoolExecutor(2, thread_name_prefix="audit-kind") as pool:
        with_cache = pool.submit(_run, trees, environment, release, reused, _of(placed, reused), FIX_COPY,
                                 kept=kept, cache=cache)
        without = pool.submit(_run, trees, environment, release, plain, _of(placed, plain), FIX_COPY,
                              kept=kept, timings=PLAIN_SECONDS)
        first = {**with_cache.result(), **without.result()}
    drop_unreadable(cache, (o.message for e in reused for o in first[e.id].values()))
    return first, {e.id for e in reused}


def _runs_again(trees: FunctionTrees, environment: Environment, release: str, entries: Sequence[RangeEntry],
                placed: Placement, first: Outcomes, reused: set[str]) -> set[str]:
    """An audit's second runs, their outcomes written into ``first``: an entry that reused compiles and did not
    pass every test, from the same copies without them; an entry whose copy of a file did not import, from its own
    fix's copy (the same file would fail the same way: on 0.11.0, 33 of 38 files), once it ran without the cache.
    The entries that ran from their own copies instead."""
    redo = [e for e in entries if e.id in reused and not _passed(first[e.id])]
    own = [e for e in entries if e.id not in reused and _import_again(placed, e, first[e.id])]
    _again(trees, environment, release, placed, first, redo + own, own)
    later = [e for e in redo if _import_again(placed, e, first[e.id])]  # rare: its file failed to import twice
    _again(trees, environment, release, placed, first, later, later)
    return {e.id for e in own + later}


def _again(trees: FunctionTrees, environment: Environment, release: str, placed: Placement,
           first: Outcomes, again: Sequence[RangeEntry], own: Sequence[RangeEntry]) -> None:
    """``again`` run without reused compiles, ``own`` of them from their own fix's copies, the rest as placed."""
    if again:
        laid = {**_of(placed, again), **_placement(trees, own, "", False)}
        first.update(_run(trees, environment, release, again, laid, FIX_COPY, kept=True, timings=AGAIN_SECONDS))


def _import_again(placed: Placement, entry: RangeEntry, outcomes: dict[str, TestOutcome]) -> bool:
    """Whether an entry none of whose tests was collected runs again from its own copy: where another copy ran
    it, or where its process ended before it (a timeout, no results), or where its file's import failed on what
    another file of the process had imported first: not the file's own failure to import."""
    return _uncollected(outcomes) and (any(placed[entry.id, t.node_id][0] != entry.commit for t in entry.tests)
                                       or any(ended_early(o.message) or _IMPORT_ORDER.search(o.message)
                                              for o in outcomes.values()))


_IMPORT_ORDER = re.compile(r"partially initialized module|already defined")
"""A failure to import that depends on the other files of the process (t14, 65c14a2cb0 on 0.7.2: "partially
initialized module 'jax._src.pallas.mosaic.lowering'" in one audit, its 3 cases passing in the next; 91280e51e4:
"Config option jax_pallas_use_mosaic_gpu already defined")."""


def _passed(outcomes: dict[str, TestOutcome]) -> bool:
    return all(outcome.outcome == PASSED for outcome in outcomes.values())


def _looks_at_compiling(trees: FunctionTrees, placed: Placement, entry: RangeEntry) -> bool:
    """Whether a test of ``entry``, in the copy of its file that runs it, looks at compiling: its run with reused
    compiles decides nothing (`kit.known.harvest.reused_compiles`)."""
    return any(trees.looks_at_compiling(placed[entry.id, t.node_id][0], t) for t in entry.tests)


def _of(placed: Placement, entries: Sequence[RangeEntry]) -> Placement:
    ids = {e.id for e in entries}
    return {key: where for key, where in placed.items() if key[0] in ids}


def _same_as_fix(trees: FunctionTrees, tag: str, entry: RangeEntry, test: TestFunction) -> bool:
    return trees.tree(tag, test) == trees.tree(entry.commit, test)  # as `_as_evidence` counts it


def _uncollected(outcomes: dict[str, TestOutcome]) -> bool:
    return all(outcome.outcome == UNCOLLECTED for outcome in outcomes.values())


def _as_evidence(trees: FunctionTrees, entry: RangeEntry, tag: str,
                 outcomes: dict[str, TestOutcome]) -> dict[str, TestOutcome]:
    """The release's own copies' outcomes, less those of a test whose copy there is not the fix's: the test as it
    was before the fix changed it passed with the bug at the parent, so what it does there is no evidence."""
    kept = {}
    for test in entry.tests:
        outcome = outcomes[test.node_id]
        if outcome.outcome in (PASSED, FAILED) and trees.tree(tag, test) != trees.tree(entry.commit, test):
            outcome = TestOutcome(OTHER_TEST, outcome.cases, f"{outcome.outcome} there, but the release's copy of "
                                  "the test is not the fix's (the test before the fix changed it): no evidence")
        kept[test.node_id] = outcome
    return kept


def _run(trees: FunctionTrees, environment: Environment, release: str, entries: Sequence[RangeEntry],
         placed: Placement, copy: str, kept: bool = False, cache: Path | None = None,
         timings: str = FIRST_SECONDS, processes: int = 0) -> dict[str, dict[str, TestOutcome]]:
    """``{entry id: {node id: outcome}}`` for ``entries``' tests, each from the copy of its file ``placed`` names
    (`_placement`): as of their fixes, or the release's own copies (``copy``).

    ``kept`` (an audit's): the files are kept beside the environment, their bytecode with them
    (`kit.known.harvest.kept_tests`), and shared out among one process per core by what each took in the last
    audit's run of this kind (``timings``); the ranges' bisect probes each release once and keeps nothing.
    ``cache``: the folder of compiles reused (`kit.known.harvest.reused_compiles`); ``processes``: at most so
    many side by side (0: one per core).
    """
    tag = f"jax-v{release}"
    history = trees.history
    with scratch.folder("harvest-range") as workdir:
        settings = _pyproject(history, (tag, *(e.commit for e in reversed(entries))))
        root = kept_root(environment, settings) if kept else None
        files = root or workdir
        if root is None and settings is not None:
            (workdir / "pyproject.toml").write_text(settings, encoding="utf-8")
        for source in sorted({source for source, _test in placed.values()}):
            paths = sorted({test.path for s, test in placed.values() if s == source})
            try:
                if root is not None:
                    lay_out(history, source, paths, root / _folder(source))
                else:
                    export_files(history, source, [*paths, "conftest.py"], workdir / _folder(source))
            except GitFailed:
                continue  # the release has none of these files: each test is not collected
        # A file the copy lacks is left out (pytest refuses a missing path): its tests are not collected.
        asked = sorted({TestFunction(f"{_folder(source)}/{test.path}", test.cls, test.name)
                        for source, test in placed.values() if (files / _folder(source) / test.path).is_file()})
        # A marker that the release's settings do not register (a newer fix's test) is no failure of the test.
        extra = ("--import-mode=importlib", "-W", "ignore::pytest.PytestUnknownMarkWarning")
        stops = _stops(entries, placed) if kept and copy == FIX_COPY else []
        ran = _run_asked(environment, files, asked, extra, workdir, stops, cache,
                         kept_file(environment, timings) if root is not None else None,
                         processes or cores()) if asked else None
    found = ran.outcomes if ran is not None else {}
    problem = ran.problem if ran is not None else f"{tag} has none of the test files"
    missing = TestOutcome(UNCOLLECTED, 0, problem or "not collected")
    return {entry.id: {t.node_id: found.get(f"{_folder(placed[entry.id, t.node_id][0])}/{t.node_id}", missing)
                       for t in entry.tests} for entry in entries}


def _stops(entries: Sequence[RangeEntry], placed: Placement) -> list[Entry]:
    """Each entry's tests as laid out, with their messages at the parent: an audit's tests of an entry stop once one
    shows it present. Not the ranges' bisect, whose kept probes are judged again by later rules without a run (a
    test skipped there would be no evidence then); not where a release's copy runs, whose outcome counts only where
    that copy is the fix's (`_as_evidence`)."""
    return [[(TestFunction(f"{_folder(placed[e.id, t.node_id][0])}/{t.path}", t.cls, t.name), message)
             for t, message in zip(e.tests, e.parent_messages)] for e in entries]


def _run_asked(environment: Environment, files: Path, asked: Sequence[TestFunction], extra: Sequence[str],
               workdir: Path, entries: Sequence[Entry], cache: Path | None, timings: Path | None,
               processes: int) -> SideRun:
    """The asked tests in one pytest process; an audit's (``timings``: where its files' seconds are kept) shared
    out among one process per core."""
    if timings is None:
        return run_side(environment, files, asked, extra_args=extra, own=workdir, entries=entries,
                        compile_cache=cache)
    bytecode = release_bytecode_env(environment)

    def run_one(group: Sequence[TestFunction], own: Path) -> SideRun:
        return run_side(environment, files, group, extra_args=extra, own=own, bytecode=bytecode, entries=entries,
                        compile_cache=cache)

    return run_shared_out(asked, workdir, run_one, processes, timings)


def _placement(trees: FunctionTrees, entries: Sequence[RangeEntry], tag: str, shared: bool) -> Placement:
    """``(entry id, node id) -> (the commit or tag whose copy of the file runs the test, the test)``: the release's
    own copy where ``tag`` is given, else (``shared``) the newest entry's copy where its function is the entry's
    fix's, else the entry's own."""
    newest: dict[str, str] = {}
    for entry in entries:  # oldest fix first (the store's order): the last one with a file is its newest
        for test in entry.tests:
            newest[test.path] = entry.commit
    placed = {}
    for entry in entries:
        for test in entry.tests:
            source = tag or (newest[test.path] if shared else entry.commit)
            if not tag and source != entry.commit and not _same_test(trees, source, entry.commit, test):
                source = entry.commit
            placed[entry.id, test.node_id] = (source, test)
    return placed


def _same_test(trees: FunctionTrees, one: str, other: str, test: TestFunction) -> bool:
    """Whether two commits' copies of ``test`` are the same: the same file, or the same function's syntax tree."""
    clone = trees.history.path
    if blob_at(clone, one, test.path) == blob_at(clone, other, test.path):
        return True
    return trees.tree(one, test) == trees.tree(other, test) is not None


def _folder(source: str) -> str:
    return source if source.startswith("jax-v") else source[:12]


def _pyproject(history: History, refs: Sequence[str]) -> str | None:
    """The release's own pytest settings (its warning filters are its era's), where the clone has its tag; else
    the newest fix's; None where none has a ``pyproject.toml``."""
    for ref in refs:
        try:
            return git(history.path, "show", f"{ref}:pyproject.toml")
        except GitFailed:
            continue
    return None
