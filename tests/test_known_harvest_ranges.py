"""The harvested entries' ranges over releases, their kinds, and the catalogue's timeline (issue 59)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from dataclasses import replace
from pathlib import Path
from typing import Sequence

import pytest

from kit.config import load_matrix
from kit.errors import UsageError
from kit.history.source import History
from kit.install import Environment
from kit.known.harvest.changed_tests import TestFunction
from kit.known.harvest import function_trees, kept_tests, release_runs
from kit.known.harvest.function_trees import FunctionTrees
from kit.known.harvest.failure_signatures import exception_name, failure_signature
from kit.known.harvest.kinds import entry_kind, failure_kind
from kit.known.harvest.listing import harvested_entries
from kit.known.harvest.pytest_run import FAILED, PASSED, SKIPPED, UNCOLLECTED, SideRun, TestOutcome
from kit.known.harvest.ranges import judged, newest_before, range_entries
from kit.known.harvest.release_runs import FIX_COPY, RangeEntry, ReleaseProbe, _placement, entry_presence, probe_release
from kit.known.harvest.release_runs import test_presence as presence_of
from kit.known.harvest.store import Store
from kit.known.measured import Presence
from kit.known.command import audit_main
from kit.known.timeline import ranking, render
from tests.git_repo import commit as _commit
from tests.git_repo import git as _git

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize(("node", "message", "kind"), [
    ("t.py::A::test_x", "E   AssertionError: \nE   Not equal to tolerance rtol=1e-06", "wrong-values"),
    ("t.py::A::test_x", "E     TypeError: custom_jvp.__new__() missing 1 required positional argument", "exception"),
    ("t.py::A::test_x", "E   jax.errors.TracerBoolConversionError: Attempted boolean conversion", "exception"),
    ("t.py::A::test_x", "E     AssertionError: 'static start' not found in 'Slice entries must be'", "error-message"),
    ("t.py::A::test_x", "E       AssertionError: Exception not raised", "error-message"),
    ("t.py::CompilationCacheTest::test_hits", "E     AssertionError: 0 != 1", "performance"),
    ("t.py::A::test_x", "Fatal Python error: Segmentation fault", "crash"),
    # JAX's own assert inside a transformation (t5: harvest-719d18dafd's checkify assert), not the test's
    ("t.py::A::test_x", "E   jax._src.source_info_util.JaxStackTraceBeforeTransformation: AssertionError: (3, "
                        "DebugInfo(", "exception"),
    # raised only under the tests' strict rank promotion; silently the wrong shape with JAX's default (t11)
    ("t.py::A::testPolyfit", "E       ValueError: Operands could not be broadcast together for true_divide on shapes "
                             "(5, 2) (2,) and with the config option jax_numpy_rank_promotion='raise'.", "wrong-values"),
])
def test_a_tests_kind_is_read_from_its_failure_at_the_parent(node: str, message: str, kind: str) -> None:
    assert failure_kind(node, message) == kind


def test_an_entrys_kind_is_its_gravest_confirmed_tests_and_a_binary_one_has_none() -> None:
    rows = [{"node_id": "a.py::test_v", "verdict": "confirmed", "at_parent": {"message": "E   AssertionError: 1 != 2"}},
            {"node_id": "a.py::test_e", "verdict": "confirmed", "at_parent": {"message": "E   ValueError: bad"}},
            {"node_id": "a.py::test_b", "verdict": "binary", "at_parent": {"message": "E   SystemExit"}}]
    assert entry_kind({"tests": rows}) == ("exception", "a.py::test_e at the parent")
    assert entry_kind({"tests": rows[2:]})[0] is None
    assert exception_name("E   jax.errors.ConcretizationTypeError: x") == "ConcretizationTypeError"
    wrapped = "E   jax._src.source_info_util.JaxStackTraceBeforeTransformation: NotImplementedError: no rule"
    assert exception_name(wrapped) == "NotImplementedError"
    helper = {"node_id": "a.py::test_h", "verdict": "confirmed",
              "at_parent": {"message": "E   AttributeError: module 'jax._src.cache_key' has no attribute '_new'"}}
    counted = {"node_id": "a.py::CacheTest::test_c", "verdict": "confirmed",
               "at_parent": {"message": "E   AssertionError: 0 != 1"}}
    assert entry_kind({"tests": [helper, counted]})[0] == "performance"
    assert exception_name("E       assert (1 + 1) == 3") == "AssertionError" and exception_name("E  5 != 2") == ""


def test_a_release_counts_present_only_where_the_test_fails_as_at_the_parent() -> None:
    parent = "E   AssertionError: [5] != [2, 5]"
    assert presence_of(TestOutcome(PASSED, 2), parent)[0] is Presence.ABSENT
    assert presence_of(TestOutcome(FAILED, 1, "E   AssertionError: [3] != [2]"), parent)[0] is Presence.PRESENT
    other = presence_of(TestOutcome(FAILED, 1, "E   AttributeError: no attribute 'Mesh'"), parent)
    assert other[0] is Presence.UNTESTED and "AttributeError, not AssertionError" in other[1]
    for outcome in (SKIPPED, UNCOLLECTED):
        assert presence_of(TestOutcome(outcome, 0, "why"), parent)[0] is Presence.UNTESTED
    helper = "E     AttributeError: module 'jax._src.compiler' has no attribute '_add_disabled_hlo_pass'"
    assert presence_of(TestOutcome(FAILED, 1, helper), helper)[0] is Presence.UNTESTED  # older releases lack it too
    assert presence_of(TestOutcome(PASSED, 1), helper)[0] is Presence.ABSENT


def test_a_later_assertion_of_the_same_message_test_is_not_the_same_failure() -> None:
    parent = "E     AssertionError: 'static start/stop/step' not found in 'Slice entries must be static integers'"
    later = "E     AssertionError: 'BatchTracer' not found in 'Array slice indices must have static start/stop/step'"
    same = "E     AssertionError: 'static start/stop/step' not found in 'Slice entries must be static'"
    assert presence_of(TestOutcome(FAILED, 1, later), parent)[0] is Presence.UNTESTED
    assert presence_of(TestOutcome(FAILED, 1, same), parent)[0] is Presence.PRESENT
    assert failure_signature(later) == ("AssertionError", "'BatchTracer'")


def test_a_missing_attribute_is_the_same_failure_only_for_the_same_attribute() -> None:
    # t11: harvest-6204db0b0d's parent lacked `_invars` (a refactor's); 0.6.1 lacks `_dedup_consts`, another era's
    parent = ("E     AttributeError: 'Jaxpr' object has no attribute '_invars' and no __dict__ for setting new "
              "attributes. Did you mean: 'invars'?")
    other = "E     AttributeError: module 'jax._src.lax.control_flow.common' has no attribute '_dedup_consts'"
    said = presence_of(TestOutcome(FAILED, 1, other), parent)
    assert said[0] is Presence.UNTESTED and "no attribute '_dedup_consts', not no attribute '_invars'" in said[1]
    assert presence_of(TestOutcome(FAILED, 1, parent), parent)[0] is Presence.PRESENT
    # 120f0b4132: the bug's own missing `accum` (a tracer's) against a release without the API (`new_ref`)
    accum = "E       AttributeError: DynamicJaxprTracer has no attribute accum"
    assert failure_signature(accum) == ("AttributeError", "no attribute 'accum'")
    api = "E       AttributeError: module 'jax' has no attribute 'new_ref'"
    assert presence_of(TestOutcome(FAILED, 1, api), accum)[0] is Presence.UNTESTED


def test_a_kept_probe_is_judged_again_by_todays_rule() -> None:
    test = TestFunction("a.py", "", "test_1")
    entry = RangeEntry("harvest-x", "c" * 40, (test,), ("E   AssertionError: 'a' not found in 'b'",))
    kept = {"release": "0.2.0", "outcome": "present", "reason": "old rule", "copy": "fix",
            "tests": {"a.py::test_1": {"outcome": "failed", "cases": 1, "message": "E  AssertionError: 'z' not found in 'b'"}}}
    assert judged(entry, kept)["outcome"] == "untested"
    ran_nothing = {"release": "0.3.0", "outcome": "untested", "reason": "not installable", "copy": "", "tests": {}}
    assert judged(entry, ran_nothing) == ran_nothing


def test_an_entry_is_present_where_one_test_is_and_absent_only_where_all_are() -> None:
    tests = (TestFunction("a.py", "", "test_1"), TestFunction("a.py", "", "test_2"))
    entry = RangeEntry("harvest-x", "c" * 40, tests, ("E   ValueError: x", "E   ValueError: y"))
    failed, passed, skipped = TestOutcome(FAILED, 1, "E   ValueError: z"), TestOutcome(PASSED, 1), TestOutcome(SKIPPED)
    assert entry_presence(entry, {"a.py::test_1": passed, "a.py::test_2": failed})[0] is Presence.PRESENT
    assert entry_presence(entry, {"a.py::test_1": passed, "a.py::test_2": passed})[0] is Presence.ABSENT
    assert entry_presence(entry, {"a.py::test_1": passed, "a.py::test_2": skipped})[0] is Presence.UNTESTED




OLD_TEST = "import foo_missing_helper\n" \
           "def test_kept():\n    assert 1 + 1 == 3\n\ndef test_changed():\n    assert True\n"
NEW_TEST = "def test_kept():\n    assert 1 + 1 == 3\n\ndef test_changed():\n    assert [5] == [2, 5]\n" \
           "\ndef test_new():\n    assert False, 'new'\n"


@pytest.fixture
def history(tmp_path: Path) -> tuple[History, dict[str, str]]:
    repo = tmp_path / "jax"
    repo.mkdir()
    _git(repo, "init", "-q", "-b", "main")
    commits = {"old": _commit(repo, "Start", {"tests/a_test.py": OLD_TEST.replace("import foo_missing_helper\n", ""),
                                              "pyproject.toml": "[tool.pytest.ini_options]\n"})}
    _git(repo, "tag", "jax-v0.1.0")
    commits["fix"] = _commit(repo, "Fix a.\n\nFixes #7", {"tests/a_test.py": NEW_TEST,
                                                         "tests/b_test.py": "import not_there\n"
                                                         "def test_b():\n    pass\n"})
    return History(repo, "made by the test"), commits


def test_a_release_runs_every_entrys_tests_in_one_process_each_from_its_own_folder(
        history: tuple[History, dict[str, str]], monkeypatch: pytest.MonkeyPatch) -> None:
    # Under CI pytest prints whole diffs: the assert line fell out of the kept message and the bug read untested.
    monkeypatch.setenv("CI", "true")
    clone, commits = history
    changed = TestFunction("tests/a_test.py", "", "test_changed")
    kept = TestFunction("tests/a_test.py", "", "test_kept")
    broken = TestFunction("tests/b_test.py", "", "test_b")
    entries = [RangeEntry("harvest-changed", commits["fix"], (changed,), ("E   AssertionError: [5] != [2, 5]",)),
               RangeEntry("harvest-kept", commits["fix"], (kept,), ("E   AssertionError: assert 2 == 3",)),
               RangeEntry("harvest-broken", commits["fix"], (broken,), ("E   AssertionError",))]
    environment = Environment(Path(sys.executable), {}, "existing")
    probes = {entry.id: probe for entry, probe in zip(entries, probe_release(clone, environment, "0.1.0", entries))}
    assert probes["harvest-changed"].outcome is Presence.PRESENT and probes["harvest-changed"].copy == "fix"
    assert probes["harvest-kept"].outcome is Presence.PRESENT
    # Not importable as of the fix, and the release has no copy of it: untested, from the fix's copy.
    assert probes["harvest-broken"].outcome is Presence.UNTESTED and probes["harvest-broken"].copy == "fix"
    assert "not_there" in probes["harvest-broken"].tests["tests/b_test.py::test_b"].message


def test_a_releases_own_copy_decides_only_where_it_is_the_fixs_test(history: tuple[History, dict[str, str]],
                                                                   tmp_path: Path) -> None:
    clone, commits = history
    repo = clone.path
    _git(repo, "checkout", "-q", "jax-v0.1.0")
    _commit(repo, "0.2.0", {"jax/x.py": "v = 2\n"})
    _git(repo, "tag", "jax-v0.2.0")
    fix = _commit(repo, "Fix again", {"tests/a_test.py": "import foo_missing_helper\n" + NEW_TEST})
    changed, kept = TestFunction("tests/a_test.py", "", "test_changed"), TestFunction("tests/a_test.py", "", "test_kept")
    entries = [RangeEntry("harvest-changed", fix, (changed,), ("E   AssertionError: [5] != [2, 5]",)),
               RangeEntry("harvest-kept", fix, (kept,), ("E   AssertionError: assert 2 == 3",))]
    environment = Environment(Path(sys.executable), {}, "existing")
    probes = probe_release(clone, environment, "0.2.0", entries)
    # the fix's copy does not import there; the release's test_changed is its old version: not run, untested
    assert [p.copy for p in probes] == ["fix", "release"]
    assert probes[0].outcome is Presence.UNTESTED and "own copy is another test: not run" in probes[0].reason
    assert probes[0].tests["tests/a_test.py::test_changed"].outcome == "uncollected"
    assert probes[1].outcome is Presence.PRESENT  # the same test there: its failure counts
    assert newest_before(clone, fix, ["0.1.0", "0.2.0", "0.3.0"]) == "0.2.0"
    assert newest_before(clone, commits["fix"], ["0.1.0", "0.2.0"]) == "0.2.0"  # 0.2.0 is on a branch without it


def _confirmed(commit: str) -> dict[str, object]:
    return {"id": f"harvest-{commit[:10]}", "status": "confirmed", "title": "Fix | a thing", "commit": commit,
            "date": "2026-01-01", "tests": [{"node_id": "tests/a_test.py::A::test_x", "verdict": "confirmed",
                                             "at_parent": {"message": "E   ValueError: x"}}]}


def test_the_timeline_shows_each_probe_and_ranks_the_releases(tmp_path: Path) -> None:
    catalogue = tmp_path / "known"
    store = Store(catalogue / "harvested")
    for commit in ("a" * 40, "b" * 40):
        store.put_result(commit, _confirmed(commit))
    (store.folder / "ranges").mkdir()
    probes = [{"release": "0.1.0", "outcome": "untested"}, {"release": "0.2.0", "outcome": "present"},
              {"release": "0.3.0", "outcome": "absent"}]
    (store.folder / "ranges" / f"{'a' * 12}.json").write_text(json.dumps({
        "summary": "fixed in 0.3.0 (after 0.2.0)", "bisection": {"fixed": {"after": "0.3.0"}}, "probes": probes}))
    listed = {e["id"]: e for e in harvested_entries(catalogue)}
    assert listed[f"harvest-{'a' * 10}"]["kind"] == "exception"
    assert listed[f"harvest-{'a' * 10}"]["ranges"]["present"] == ["0.2.0"]  # type: ignore[index]
    assert listed[f"harvest-{'b' * 10}"]["ranges"] is None
    page = render([], [catalogue])
    assert "| harvest-aaaaaaaaaa: Fix \\| a thing | exception | ? | ✗ | ✓ |" in page
    assert "| harvest-bbbbbbbbbb: Fix \\| a thing | exception |  |  |  |" in page
    found = [("x", "k", "t", {"0.1.0": "present", "0.2.0": "absent"}), ("y", "k", "t", {"0.1.0": "present"})]
    assert ranking(found) == [("0.2.0", 0, 1, 0), ("0.1.0", 2, 0, 0)]


def test_the_ranges_bisect_only_the_confirmed_entries(tmp_path: Path) -> None:
    store = Store(tmp_path / "harvested")
    store.put_result("a" * 40, _confirmed("a" * 40))
    store.put_result("b" * 40, {**_confirmed("b" * 40), "status": "binary"})
    found = range_entries(store)
    assert [(e.id, e.tests) for e in found] == [(f"harvest-{'a' * 10}", (TestFunction("tests/a_test.py", "A",
                                                                                       "test_x"),))]


def test_audit_ranks_the_releases_from_what_was_kept(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    catalogue = tmp_path / "known"
    store = Store(catalogue / "harvested")
    store.put_result("a" * 40, _confirmed("a" * 40))
    (store.folder / "ranges").mkdir()
    (store.folder / "ranges" / f"{'a' * 12}.json").write_text(json.dumps({"probes": [
        {"release": "0.1.0", "outcome": "present"}, {"release": "0.2.0", "outcome": "absent"}]}))
    assert audit_main(load_matrix(ROOT / "matrix.toml"), ["--rank"], print, catalogue=catalogue) == 0
    said = capsys.readouterr().out.splitlines()
    assert said[1:] == ["  0.2.0: 0 present, 1 absent, 0 untested, 0 never measured",
                        "  0.1.0: 1 present, 0 absent, 0 untested, 0 never measured"]


@pytest.mark.parametrize(("argv", "said"), [
    (["0.4.35", "--kind", "wrong-value"], "--kind 'wrong-value' is not a kind"),
    (["--python", "/usr/bin/python3", "--harvested"], "--harvested runs JAX's tests in a release's environment"),
])
def test_audit_refuses_a_kind_it_lacks_and_harvested_entries_without_a_release(argv: list[str], said: str) -> None:
    with pytest.raises(UsageError, match=re.escape(said)):
        audit_main(load_matrix(ROOT / "matrix.toml"), argv, print)


def test_an_audit_lays_a_test_file_out_once_for_the_entries_whose_test_it_holds_unchanged(
        history: tuple[History, dict[str, str]]) -> None:
    clone, commits = history
    later = _commit(clone.path, "Fix b.", {"tests/a_test.py": NEW_TEST.replace("[5] == [2, 5]", "[5] == [3, 5]")
                                           + "\ndef test_later():\n    assert False, 'later'\n"})
    kept, changed = TestFunction("tests/a_test.py", "", "test_kept"), TestFunction("tests/a_test.py", "", "test_changed")
    entries = [RangeEntry("harvest-fix", commits["fix"], (kept, changed), ("E   AssertionError", "E   AssertionError")),
               RangeEntry("harvest-later", later, (TestFunction("tests/a_test.py", "", "test_later"),),
                          ("E   AssertionError: later",))]
    trees = FunctionTrees(clone, [t for e in entries for t in e.tests])
    placed = _placement(trees, entries, "", shared=True)
    assert placed["harvest-fix", kept.node_id][0] == later  # the same function in the newer copy
    assert placed["harvest-fix", changed.node_id][0] == commits["fix"]  # changed since: its own copy
    assert {source for source, _ in _placement(trees, entries, "", shared=False).values()} == {commits["fix"], later}
    environment = Environment(Path(sys.executable), {}, "existing")
    probes = probe_release(clone, environment, "0.1.0", entries, shared=True)
    assert [p.outcome for p in probes] == [Presence.PRESENT, Presence.PRESENT]
    assert probes[0].reason.startswith(f"fix copy (the fix's test in {later[:10]}'s copy of its file): ")  # t13
    assert probes[1].reason.startswith("fix copy: ")


def test_a_failure_on_a_release_that_holds_the_fix_decides_nothing() -> None:
    """A test that fails "as at the parent" on a release whose tag holds the fix fails there for another cause
    (seven entries of the first ranges said "open: present on 0.12.1" for fixes 0.11.0 already held)."""
    from kit.known.harvest.ranges import fix_held
    probe = {"release": "0.11.0", "outcome": "present", "reason": "fix copy: fails as at the fix's parent: E"}
    held = fix_held(probe, frozenset({"0.11.0", "0.12.1"}), "6204db0b0d2f")
    assert held["outcome"] == "untested" and "holds the fix 6204db0b0d" in str(held["reason"])
    assert fix_held(probe, frozenset({"0.12.1"}), "6204db0b0d2f") == probe
    absent = {**probe, "outcome": "absent"}
    assert fix_held(absent, frozenset({"0.11.0"}), "6204db0b0d2f") == absent


def test_an_audit_on_a_release_holding_the_fix_reads_a_failure_as_at_the_parent_as_deciding_nothing(
        history: tuple[History, dict[str, str]]) -> None:
    from kit.known.harvest.audit import _fix_held
    clone, commits = history
    _git(clone.path, "tag", "jax-v0.2.0", commits["fix"])
    entry = RangeEntry("harvest-fix", commits["fix"], (TestFunction("tests/a_test.py", "", "test_changed"),),
                       ("E   AssertionError",))
    present = ReleaseProbe("0.2.0", Presence.PRESENT, "fix copy: fails as at the fix's parent", FIX_COPY, {}, 1.0)
    held = _fix_held(clone, "0.2.0", entry, present)
    assert held.outcome is Presence.UNTESTED and "holds the fix" in held.reason  # t13: c77c877054 on 0.12.1
    assert _fix_held(clone, "0.1.0", entry, replace(present, release="0.1.0")).outcome is Presence.PRESENT
    absent = replace(present, outcome=Presence.ABSENT)
    assert _fix_held(clone, "0.2.0", entry, absent) == absent


def test_the_releases_holding_a_fix_are_its_tags_and_the_untagged_ones_after_them(tmp_path: Path) -> None:
    from kit.known.harvest.ranges import holding_fix
    repo = tmp_path / "jax"
    run = lambda *a: subprocess.run(["git", "-C", str(repo), *a], check=True, capture_output=True, text=True)  # noqa: E731
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    run("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "--allow-empty", "-m", "old")
    run("tag", "jax-v0.4.30")
    run("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "--allow-empty", "-m", "fix")
    fix = run("rev-parse", "HEAD").stdout.strip()
    run("tag", "jax-v0.4.31")
    run("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "--allow-empty", "-m", "later fix")
    later = run("rev-parse", "HEAD").stdout.strip()
    history = History(repo, "test")
    releases = ["0.4.30", "0.4.31", "0.4.32"]
    assert holding_fix(history, fix, releases) == {"0.4.31", "0.4.32"}
    assert holding_fix(history, later, releases) == frozenset()


def test_a_range_whose_newer_releases_were_not_decided_is_not_called_open() -> None:
    from kit.known.boundaries import search_range
    from kit.known.bisection import summary
    releases = ["0.10.0", "0.10.1", "0.10.2"]
    undecided = search_range(releases, {"0.10.0": Presence.PRESENT, "0.10.1": Presence.UNTESTED,
                                         "0.10.2": Presence.UNTESTED}, ())
    said = summary(undecided)
    assert "open" not in said and "not decided after it (unknown: 0.10.1, 0.10.2)" in said
    decided = search_range(releases, {r: Presence.PRESENT for r in releases}, ())
    assert "open: present on the newest decided, 0.10.2" in summary(decided)


def test_an_audit_keeps_its_test_files_and_tree_digests_and_never_rewrites_a_kept_file(
        history: tuple[History, dict[str, str]], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Kept files keep their time stamps (their bytecode stays valid) and the digests spare a second parse; what
    # each test did, and so each verdict, is what a fresh layout gives.
    clone, commits = history
    later = _commit(clone.path, "Fix b.", {"tests/a_test.py": NEW_TEST + "\ndef test_later():\n    assert False\n"})
    kept, changed = TestFunction("tests/a_test.py", "", "test_kept"), TestFunction("tests/a_test.py", "", "test_changed")
    entries = [RangeEntry("harvest-fix", commits["fix"], (kept, changed), ("E   AssertionError", "E   AssertionError")),
               RangeEntry("harvest-broken", commits["fix"], (TestFunction("tests/b_test.py", "", "test_b"),),
                          ("E   AssertionError",)),
               RangeEntry("harvest-later", later, (TestFunction("tests/a_test.py", "", "test_later"),),
                          ("E   AssertionError",))]
    environment = Environment(Path(sys.executable), {}, "existing")
    fresh = probe_release(clone, environment, "0.1.0", entries, shared=True)
    home = tmp_path / "kept"
    monkeypatch.setattr(kept_tests, "kept_home", lambda _environment: home)
    first = probe_release(clone, environment, "0.1.0", entries, shared=True)
    laid = sorted(home.rglob("*_test.py"))
    assert laid and (home / "function-trees.json").is_file()
    for path in laid:
        os.utime(path, (1_000_000, 1_000_000))
    monkeypatch.setattr(function_trees, "parsed_tests", _no_parse)  # a second audit reads the kept digests
    function_trees.blob_at.cache_clear()
    second = probe_release(clone, environment, "0.1.0", entries, shared=True)
    assert all(path.stat().st_mtime == 1_000_000 for path in laid)
    outcomes = [[(p.outcome, p.copy, {n: o.outcome for n, o in p.tests.items()}) for p in run]
                for run in (fresh, first, second)]
    assert outcomes[0] == outcomes[1] == outcomes[2]
    assert [p.outcome for p in fresh] == [Presence.PRESENT, Presence.UNTESTED, Presence.PRESENT]


def _no_parse(source: str, path: str) -> dict[TestFunction, object]:
    raise AssertionError(f"{path} parsed again")


def test_a_test_functions_tree_digest_ignores_the_rest_of_its_file_and_is_none_where_the_file_lacks_it(
        history: tuple[History, dict[str, str]], tmp_path: Path) -> None:
    clone, commits = history
    moved = _commit(clone.path, "Elsewhere", {"tests/a_test.py": "# a comment\n" + NEW_TEST + "\nX = 1\n"})
    trees = FunctionTrees(clone, [], tmp_path / "trees.json")
    kept, changed = TestFunction("tests/a_test.py", "", "test_kept"), TestFunction("tests/a_test.py", "", "test_changed")
    new = TestFunction("tests/a_test.py", "", "test_new")
    assert trees.tree(moved, kept) == trees.tree(commits["old"], kept) is not None
    assert trees.tree(moved, changed) != trees.tree(commits["old"], changed)
    assert trees.tree(commits["old"], new) is None and trees.tree(moved, new) is not None
    assert trees.tree(commits["old"], TestFunction("tests/none_test.py", "", "test_x")) is None
    trees.save()
    again = FunctionTrees(clone, [], tmp_path / "trees.json")
    assert again.digests == trees.digests and again.tree(moved, kept) == trees.tree(moved, kept)


def test_an_audit_runs_a_file_that_did_not_import_again_only_from_another_copy(
        history: tuple[History, dict[str, str]], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The same file in the same environment fails to import the same way: on 0.11.0, 33 of the 38 files of the
    # second process were the first's again, each a second of JAX's import for nothing.
    clone, commits = history
    later = _commit(clone.path, "Fix c.", {"tests/a_test.py": "import not_there_either\n" + NEW_TEST})
    kept = TestFunction("tests/a_test.py", "", "test_kept")
    entries = [RangeEntry("harvest-fix", commits["fix"], (kept,), ("E   AssertionError: assert 2 == 3",)),
               RangeEntry("harvest-broken", commits["fix"], (TestFunction("tests/b_test.py", "", "test_b"),),
                          ("E   AssertionError",)),
               RangeEntry("harvest-later", later, (kept,), ("E   AssertionError: assert 2 == 3",))]
    runs: list[list[str]] = []
    real = release_runs.run_side

    def spied(environment: Environment, workdir: Path, tests: Sequence[TestFunction], **kwargs: object) -> SideRun:
        runs.append(sorted(t.path for t in tests))
        return real(environment, workdir, tests, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(release_runs, "run_side", spied)
    probes = probe_release(clone, Environment(Path(sys.executable), {}, "existing"), "0.1.0", entries, shared=True)
    # harvest-fix's test ran first from the later copy (it does not import), then from its own; harvest-broken's
    # own copy and harvest-later's did not import and ran once (harvest-later's then from the release's copy)
    assert runs[0] == sorted([f"{later[:12]}/tests/a_test.py", f"{commits['fix'][:12]}/tests/b_test.py"])
    assert runs[1:] == [[f"{commits['fix'][:12]}/tests/a_test.py"], ["jax-v0.1.0/tests/a_test.py"]]
    assert [(p.outcome, p.copy) for p in probes] == [(Presence.PRESENT, "fix"), (Presence.UNTESTED, "fix"),
                                                     (Presence.PRESENT, "release")]


def test_a_file_whose_import_failed_on_another_files_runs_again_from_its_own_copy(tmp_path: Path) -> None:
    # t14: 65c14a2cb0's file did not import on 0.7.2 in one audit ("partially initialized module"), after another
    # file of its process; in the next its 3 cases passed. Not the file's own failure: it runs again.
    repo = tmp_path / "jax"
    repo.mkdir()
    _git(repo, "init", "-q", "-b", "main")
    _commit(repo, "Start", {"pyproject.toml": "[tool.pytest.ini_options]\n"})
    _git(repo, "tag", "jax-v0.1.0")
    fix = _commit(repo, "Fix", {
        "tests/a_first_test.py": "import sys, types\nsys.modules['kit_marker'] = types.ModuleType('kit_marker')\n"
                                 "def test_first():\n    assert True\n",
        "tests/b_test.py": "import sys\nif 'kit_marker' in sys.modules:\n    raise AttributeError(\"partially "
                           "initialized module 'jax._src.x' has no attribute 'y' (a circular import)\")\n"
                           "def test_b():\n    assert True\n"})
    entries = [RangeEntry("harvest-first", fix, (TestFunction("tests/a_first_test.py", "", "test_first"),),
                          ("E   AssertionError",)),
               RangeEntry("harvest-b", fix, (TestFunction("tests/b_test.py", "", "test_b"),), ("E   AssertionError",))]
    probes = probe_release(History(repo, "made by the test"), Environment(Path(sys.executable), {}, "existing"),
                           "0.1.0", entries, shared=True)
    assert [(p.outcome, p.reason) for p in probes] == [(Presence.ABSENT, "fix copy: passes")] * 2
