"""``known --harvest --ranges``: each confirmed entry's range over the releases, found by release bisection.

The search is the hand entries' (`kit.known.boundaries.search_range`): both
ends of the releases and the newest release before the fix first, then each
boundary bisected, round by round; the releases a round wants are measured
one at a time, every entry that wants a release in one pytest process there
(`kit.known.harvest.release_runs`). Each probe is kept in
``harvested/ranges/COMMIT.json`` with the search's answer after each release,
so a stopped search resumes from what it kept.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Sequence

from ...arguments import Parser
from ...atomic_files import atomic_write_text
from ...config import Matrix
from ...errors import KitError, UsageError
from ...exit_codes import EXIT_OK
from ...history.git import GitFailed, git
from ...history.source import History
from ...install import InstallKey, open_index, prepare
from ...json_types import JsonObject, as_list, as_object
from ...log_events import Log
from ...records import JsonTextError, read_json, release_key
from ..bisection import bisection_json, every_release, summary
from ..boundaries import RangeSearch, search_range
from ..measured import Presence
from .changed_tests import TestFunction
from .harness import harness_requirements
from .pytest_run import TestOutcome
from .release_runs import RangeEntry, ReleaseProbe, entry_presence, probe_release
from .store import Store
from .verdicts import CONFIRMED

OLDEST = "0.4.30"
"""The oldest release searched by default: the harvest's era (issue 59: its history since jax-v0.4.30)."""


def ranges_main(matrix: Matrix, argv: Sequence[str], log: Log, store: Store, history: History) -> int:
    parser = Parser(prog="nox -s known -- --harvest --ranges", tip="see docs/known.md (The harvest)",
                    description="Each confirmed harvested entry's range over the releases, by release bisection.")
    parser.add_argument("--harvest", action="store_true", required=True)
    parser.add_argument("--ranges", action="store_true", required=True)
    parser.add_argument("--only", default="", help="entry ids, comma-separated (default: every confirmed entry)")
    parser.add_argument("--oldest", default=OLDEST, help=f"the oldest release searched (default {OLDEST})")
    parser.add_argument("--jax-repo", type=Path, help="a clone of JAX (default: matrix.toml's, else the kit's own)")
    parser.add_argument("--store", type=Path, help="the harvest's store (default: the catalogue's harvested/)")
    parser.add_argument("--rounds", type=int, default=40,
                        help="bisection rounds at most (default 40; 0 judges what was kept again and runs nothing)")
    args = parser.parse_args(list(argv))
    if args.rounds < 0:
        raise UsageError(f"--rounds {args.rounds}: give 0 or more", "0 judges what was kept again, runs nothing")
    entries = range_entries(store)
    if args.only.strip():
        wanted = {part.strip() for part in args.only.split(",") if part.strip()}
        unknown = wanted - {e.id for e in entries}
        if unknown:
            raise UsageError(f"--only names no confirmed harvested entry: {', '.join(sorted(unknown))}",
                             "known --json lists them (status confirmed)")
        entries = [e for e in entries if e.id in wanted]
    candidates = every_release(open_index(matrix), args.oldest)
    print(f"{len(entries)} confirmed entries, bisected over {len(candidates)} releases "
          f"({candidates[0]} to {candidates[-1]})", flush=True)
    searches = bisect_harvested(matrix, history, store, entries, candidates, log, args.rounds)
    for entry in entries:
        print(f"{entry.id}: {summary(searches[entry.id])}", flush=True)
    return EXIT_OK


def range_entries(store: Store) -> list[RangeEntry]:
    """The confirmed entries of ``store``, each with its confirmed tests and their failures at the parent."""
    found = []
    for result in store.results():
        if result.get("status") != CONFIRMED:
            continue
        rows = [as_object(r) for r in as_list(result.get("tests")) if as_object(r).get("verdict") == CONFIRMED]
        tests = tuple(_test_of(str(row["node_id"])) for row in rows)
        messages = tuple(str(as_object(row.get("at_parent")).get("message", "")) for row in rows)
        found.append(RangeEntry(str(result["id"]), str(result["commit"]), tests, messages))
    return found


def _test_of(node_id: str) -> TestFunction:
    parts = node_id.split("::")
    return TestFunction(parts[0], parts[1] if len(parts) == 3 else "", parts[-1])


def newest_before(history: History, commit: str, candidates: Sequence[str]) -> str | None:
    """The newest release of ``candidates`` whose tag the fix is not in: the problem's last release, to seed."""
    try:
        listed = git(history.path, "tag", "--no-contains", commit, "--list", "jax-v*").split()
    except GitFailed:
        return None
    without = {tag.removeprefix("jax-v") for tag in listed}
    older = [release for release in candidates if release in without]
    return older[-1] if older else None


def holding_fix(history: History, commit: str, candidates: Sequence[str]) -> frozenset[str]:
    """The releases of ``candidates`` that hold the fix: those whose tag contains it, and those the clone has no
    tag for that come after one that does (JAX's releases descend from the one before; a fix no tag holds yet
    is not assumed in a release the clone cannot show)."""
    try:
        containing = git(history.path, "tag", "--contains", commit, "--list", "jax-v*").split()
    except GitFailed:
        return frozenset()
    holding = {t.removeprefix("jax-v") for t in containing}
    if not holding:
        return frozenset()
    first = min(release_key(r) for r in holding)
    return frozenset(r for r in candidates if r in holding or (not _tagged(history, r) and release_key(r) > first))


def fix_held(probe: JsonObject, holding: frozenset[str], commit: str) -> JsonObject:
    """A failure "as at the parent" on a release that holds the fix is not the bug's (the test's check is looser
    than the fix: it fails there for another cause): the probe decides nothing, and says why."""
    if probe.get("outcome") != Presence.PRESENT.value or str(probe.get("release")) not in holding:
        return probe
    why = (f"fails as at the parent, but jax {probe['release']} holds the fix {commit[:10]}: this failure is not "
           f"the bug's, so it decides nothing ({str(probe.get('reason', ''))[:200]})")
    return {**probe, "outcome": Presence.UNTESTED.value, "reason": why}


def _tagged(history: History, release: str) -> bool:
    try:
        git(history.path, "rev-parse", "--verify", "--quiet", f"refs/tags/jax-v{release}")
    except GitFailed:
        return False
    return True


def ranges_path(store: Store, commit: str) -> Path:
    return store.folder / "ranges" / f"{commit[:12]}.json"


def load_probes(store: Store, commit: str) -> list[JsonObject]:
    try:
        data = read_json(ranges_path(store, commit))
    except (OSError, JsonTextError):
        return []
    return [as_object(p) for p in as_list(as_object(data).get("probes"))] if isinstance(data, dict) else []


def judged(entry: RangeEntry, probe: JsonObject) -> JsonObject:
    """A kept probe judged again by today's rule (`kit.known.harvest.release_runs.entry_presence`) from the tests'
    outcomes it kept: a sharper rule needs no run again. A probe that ran nothing stays as it was."""
    tests = as_object(probe.get("tests"))
    if not tests or not probe.get("copy"):
        return probe
    presence, why = entry_presence(entry, {node: TestOutcome.of(data) for node, data in tests.items()})
    return {**probe, "outcome": presence.value, "reason": f"{probe['copy']} copy: {why}"}


def known_of(probes: Sequence[JsonObject]) -> dict[str, Presence]:
    return {str(p["release"]): Presence(str(p["outcome"])) for p in probes}


def bisect_harvested(matrix: Matrix, history: History, store: Store, entries: Sequence[RangeEntry],
                     candidates: Sequence[str], log: Log, max_rounds: int = 40) -> dict[str, RangeSearch]:
    """Every entry's search run to its end (or ``max_rounds``); each entry's file written after each release."""
    holding = {e.id: holding_fix(history, e.commit, candidates) for e in entries}
    probes = {e.id: [fix_held(judged(e, p), holding[e.id], e.commit) for p in load_probes(store, e.commit)]
              for e in entries}
    seeds = {e.id: tuple(s for s in [newest_before(history, e.commit, candidates)] if s) for e in entries}

    def search(entry: RangeEntry) -> RangeSearch:
        return search_range(candidates, known_of(probes[entry.id]), seeds[entry.id])

    for entry in entries:  # what was kept, judged again, is written back before anything runs
        if probes[entry.id]:
            _save(store, entry, probes[entry.id], candidates, search(entry))

    for number in range(1, max_rounds + 1):
        wanted = {e.id: search(e).wanted for e in entries}
        releases = sorted({r for w in wanted.values() for r in w}, key=release_key)
        if not releases:
            break
        print(f"round {number}: {sum(map(len, wanted.values()))} probes of {len(entries)} entries on "
              f"{len(releases)} releases ({', '.join(releases)})", flush=True)
        for release in releases:
            group = [e for e in entries if release in wanted[e.id]]
            for entry, probe in zip(group, _probe(matrix, history, release, group, log)):
                kept = fix_held(probe.to_json(), holding[entry.id], entry.commit)
                probes[entry.id] = [p for p in probes[entry.id] if p.get("release") != release] + [kept]
                _save(store, entry, probes[entry.id], candidates, search(entry))
                print(f"  {entry.id} on jax {release}: {kept['outcome']} ({str(kept['reason'])[:160]})", flush=True)
    return {e.id: search(e) for e in entries}


def _probe(matrix: Matrix, history: History, release: str, group: Sequence[RangeEntry], log: Log
           ) -> list[ReleaseProbe]:
    """The group's probes on ``release``; untested, with why, where its environment cannot be had here."""
    harness = harness_requirements(history, _era_ref(history, release, group))
    try:
        prepared = prepare(matrix, release, InstallKey(requires=harness), log)
        problem = prepared.problem
    except KitError as error:
        prepared, problem = None, str(error)
    if prepared is None or prepared.environment is None:
        why = f"not installable here with JAX's test harness: {problem}"[:400]
        return [ReleaseProbe(release, Presence.UNTESTED, why, "", {}, 0.0) for _ in group]
    return probe_release(history, prepared.environment, release, group)


def _era_ref(history: History, release: str, group: Sequence[RangeEntry]) -> str:
    """The release's tag where the clone has it, else the newest fix of the group (a release newer than the clone)."""
    return f"jax-v{release}" if _tagged(history, release) else group[-1].commit


def _save(store: Store, entry: RangeEntry, probes: list[JsonObject], candidates: Sequence[str],
          search: RangeSearch) -> None:
    path = ranges_path(store, entry.commit)
    path.parent.mkdir(parents=True, exist_ok=True)
    ordered = sorted(probes, key=lambda p: release_key(str(p["release"])))
    record = {"id": entry.id, "commit": entry.commit, "tests": [t.node_id for t in entry.tests],
              "summary": summary(search), "bisection": bisection_json(candidates, search), "probes": ordered}
    atomic_write_text(path, json.dumps(record, indent=1) + "\n")

