"""The harvest's logic on a tiny git repository made here: which commits are candidates, which test functions each
changed, what a pair's outcomes mean, the store a harvest resumes from, and the pytest plugin that selects tests."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from kit.history.source import History
from kit.json_types import as_list, as_object
from kit.install import Environment, Prepared
from kit.known.harvest import command as command_module, confirm as confirm_module, select_plugin
from kit.known.harvest.candidates import HarvestCandidate, issue_of, list_candidates
from kit.known.harvest.command import progress_line, summary_line, time_line
from kit.known.harvest.changed_tests import TestFunction, changed_functions, changed_tests
from kit.known.harvest.confirm import HarvestBuild, confirm
from kit.known.harvest.harness import era_specifiers
from kit.known.harvest.listing import harvested_entries
from kit.known.harvest.pytest_run import (FAILED, PASSED, SKIPPED, UNCOLLECTED, SideInterrupted, TestOutcome, run_side,
                                         summarised)
from kit.known.harvest.store import FIX, PARENT, BuildKey, Store
from kit.known.harvest.verdicts import BINARY, CONFIRMED, UNRUN, test_verdict as verdict_of, unrun_reasons
from tests.git_repo import commit as _commit
from tests.git_repo import git as _git

VERSION = '_version = "0.2.0"\n_minimum_jaxlib_version = "0.1.0"\n'
TEST_BEFORE = '''
class FooTest:
  def test_a(self):
    assert 1 == 1

  def test_b(self):
    assert 2 == 2

  def helper(self):
    pass
'''
TEST_AFTER = '''
class FooTest:
  def test_a(self):
    # a comment and a blank line do not change a test

    assert 1 == 1

  def test_b(self):
    assert 2 == 2 and 3 == 3

  def test_c(self):
    pass

  def helper(self):
    return 1

def test_top():
  pass
'''




@pytest.fixture
def tiny(tmp_path: Path) -> tuple[History, dict[str, str]]:
    repo = tmp_path / "jax"
    repo.mkdir()
    _git(repo, "init", "-q", "-b", "main")
    commits = {"base": _commit(repo, "Start", {"jax/version.py": VERSION, "jax/foo.py": "x = 1\n",
                                               "tests/foo_test.py": TEST_BEFORE})}
    commits["fix"] = _commit(repo, "Fix foo for empty inputs.\n\nFixes #1234", {
        "jax/foo.py": "x = 2\n", "tests/foo_test.py": TEST_AFTER})
    commits["tests_only"] = _commit(repo, "Fix a flaky test", {"tests/foo_test.py": TEST_AFTER + "\n# more\n"})
    commits["no_word"] = _commit(repo, "Speed up foo", {"jax/foo.py": "x = 3\n",
                                                        "tests/foo_test.py": TEST_AFTER + "\ndef test_d(): pass\n"})
    commits["cpp_fix"] = _commit(repo, "[pytree] fixed namedtuples\n\nCloses #9.", {
        "jaxlib/pytree.cc": "int x;\n", "tests/foo_test.py": TEST_AFTER + "\ndef test_d(): assert 1\n"})
    return History(repo, "a repository made by the test"), commits


def test_candidates_change_code_and_a_test_and_say_fix(tiny: tuple[History, dict[str, str]]) -> None:
    history, commits = tiny
    found = list_candidates(history, commits["base"], "main")
    assert [c.commit for c in found] == [commits["fix"], commits["cpp_fix"]]  # tests only, or no "fix": not
    fix, cpp = found
    assert fix.parent == commits["base"] and fix.title == "Fix foo for empty inputs."
    assert fix.issue == "https://github.com/jax-ml/jax/issues/1234" and fix.python_code
    assert cpp.issue.endswith("/9") and not cpp.python_code  # a compiled change: no overlay can lay it


def test_the_changed_test_functions_are_those_whose_tree_changed_or_is_new(tiny: tuple[History, dict[str, str]]) -> None:
    history, commits = tiny
    changed = changed_tests(history, commits["fix"], commits["base"], ("tests/foo_test.py",))
    assert [t.node_id for t in changed] == ["tests/foo_test.py::test_top", "tests/foo_test.py::FooTest::test_b",
                                            "tests/foo_test.py::FooTest::test_c"]
    assert changed_tests(history, commits["fix"], commits["base"], ("tests/gone_test.py",)) == []


def test_a_new_file_has_every_test_changed_and_one_that_does_not_parse_none() -> None:
    assert changed_functions(None, TEST_BEFORE, "t.py") == [TestFunction("t.py", "FooTest", "test_a"),
                                                            TestFunction("t.py", "FooTest", "test_b")]
    assert changed_functions(TEST_BEFORE, "def test_x(:\n", "t.py") == []


def test_issue_named_as_fixed_in_the_message() -> None:
    assert issue_of("Fixes https://github.com/jax-ml/jax/issues/39309") == "https://github.com/jax-ml/jax/issues/39309"
    assert issue_of("see #12 for context") == ""


def test_era_specifiers_keep_pins_and_drop_comments() -> None:
    text = "absl-py\nhypothesis==6.142.1  # TODO: unpin\n-r other.txt\npillow>=11.3\nfoo; python_version<'3'\n"
    assert era_specifiers(text) == {"absl-py": "absl-py", "hypothesis": "hypothesis==6.142.1", "pillow": "pillow>=11.3"}


@pytest.mark.parametrize(("fix", "parent", "verdict"), [
    (PASSED, FAILED, CONFIRMED), (PASSED, PASSED, BINARY), (SKIPPED, FAILED, UNRUN), (FAILED, FAILED, UNRUN),
    (UNCOLLECTED, FAILED, UNRUN), (PASSED, UNCOLLECTED, UNRUN), (PASSED, SKIPPED, UNRUN)])
def test_a_pair_confirms_only_failing_at_the_parent_and_passing_at_the_fix(fix: str, parent: str, verdict: str) -> None:
    assert verdict_of(TestOutcome(fix, 1, "m"), TestOutcome(parent, 1, "m"))[0] == verdict


def test_a_test_functions_outcome_is_its_cases() -> None:
    tests = [TestFunction("t.py", "C", "test_p"), TestFunction("t.py", "C", "test_f"), TestFunction("u.py", "", "test_u")]
    data: dict[str, object] = {"cases": [
        ["t.py", "C", "test_p", "t.py::C::test_p0", "passed", ""], ["t.py", "C", "test_p", "t.py::C::test_p1", "skipped", "s"],
        ["t.py", "C", "test_f", "t.py::C::test_f0", "passed", ""], ["t.py", "C", "test_f", "t.py::C::test_f1", "failed", "E boom"]],
        "collect_errors": [["u.py", "ImportError: no"]]}
    out = summarised(tests, data)
    assert out["t.py::C::test_p"] == TestOutcome(PASSED, 2)
    assert out["t.py::C::test_f"] == TestOutcome(FAILED, 2, "E boom")
    assert out["u.py::test_u"].outcome == UNCOLLECTED and "ImportError" in out["u.py::test_u"].message


PLUGGED = '''
import functools
import unittest


def _generated(method, suffix):  # as absl's parameterized names a case: wraps the function, then renames it
    @functools.wraps(method)
    def case(self):
        return method(self)
    case.__name__ = method.__name__ + suffix
    return case


def _defined():
    def test_param(self):
        raise AssertionError("case fails")
    return test_param


class FooTest(unittest.TestCase):  # as JAX's (absltest's TestCase): collected whatever its name
    def test_asked(self):
        assert True

    def test_other(self):
        raise AssertionError("never selected")

    test_param0 = _generated(_defined(), "0")
    test_param1 = _generated(_defined(), "1")


def test_skipped():
    import pytest
    pytest.skip("not on this machine")
'''


def test_the_plugin_runs_only_the_asked_functions_and_their_generated_cases(tmp_path: Path) -> None:
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "foo_test.py").write_text(PLUGGED)
    asked = [TestFunction("tests/foo_test.py", "FooTest", "test_asked"),
             TestFunction("tests/foo_test.py", "FooTest", "test_param"),
             TestFunction("tests/foo_test.py", "", "test_skipped"),
             TestFunction("tests/missing_test.py", "", "test_none")]
    ran = run_side(Environment(Path(sys.executable), {}, "existing"), tmp_path, asked[:3])
    assert ran.outcomes["tests/foo_test.py::FooTest::test_asked"].outcome == PASSED, ran
    assert ran.outcomes["tests/foo_test.py::FooTest::test_param"] == TestOutcome(FAILED, 2, ran.outcomes[
        "tests/foo_test.py::FooTest::test_param"].message)  # both cases, found through __wrapped__; test_other not run
    assert "case fails" in ran.outcomes["tests/foo_test.py::FooTest::test_param"].message
    assert ran.outcomes["tests/foo_test.py::test_skipped"] == TestOutcome(SKIPPED, 1, "Skipped: not on this machine")
    assert summarised(asked[3:], {})["tests/missing_test.py::test_none"].outcome == UNCOLLECTED


def _fails_over_two_lines() -> None:
    total = (1 +
             0)
    raise ValueError(f"bad {total}")


def test_the_plugins_one_source_tree_cache_leaves_a_failures_report_as_it_was(monkeypatch: pytest.MonkeyPatch) -> None:
    from _pytest._code import code

    try:
        _fails_over_two_lines()
    except ValueError:
        info = code.ExceptionInfo.from_current()
    before = str(info.getrepr(style="long"))
    monkeypatch.setattr(code.TracebackEntry, "getsource", code.TracebackEntry.getsource)  # undone after the test
    monkeypatch.setattr(select_plugin, "_PARSED", {})
    select_plugin._share_parsed_sources()
    assert str(info.getrepr(style="long")) == before == str(info.getrepr(style="long"))
    assert Path(__file__) in select_plugin._PARSED  # this file's tree, parsed once for both reports


KEY = BuildKey("0.1.0", "0.1.0", "3.13.0", ("pytest==9",), 4)


def test_the_store_keeps_each_side_and_ignores_what_it_did_not_write(tmp_path: Path) -> None:
    store = Store(tmp_path / "harvested")
    assert store.probe("a" * 40, FIX, KEY) is None
    store.put_probe("a" * 40, FIX, KEY, {"tests": {}})
    assert store.probe("a" * 40, FIX, KEY) == {"commit": "a" * 40, "side": FIX, "build": KEY.to_json(), "tests": {}}
    assert store.probe("a" * 40, PARENT, KEY) is None
    assert store.probe("a" * 40, FIX, BuildKey("0.1.0", "0.1.1", "3.13.0", ("pytest==9",), 4)) is None  # other build
    store.probe_path("b" * 40, FIX, KEY).write_text("{torn")
    assert store.probe("b" * 40, FIX, KEY) is None
    assert list(store.probes.glob("*.tmp*")) == []


def test_a_commit_whose_two_sides_are_kept_runs_nothing_again(tiny: tuple[History, dict[str, str]], tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    history, commits = tiny
    candidate = list_candidates(history, commits["base"], "main")[0]
    store = Store(tmp_path / "known" / "harvested")
    nodes = ["tests/foo_test.py::test_top", "tests/foo_test.py::FooTest::test_b", "tests/foo_test.py::FooTest::test_c"]
    fails = {node: TestOutcome(FAILED, 1, "E wrong").to_json() for node in nodes}
    passes = {node: TestOutcome(PASSED, 1).to_json() for node in nodes}
    store.put_probe(candidate.commit, FIX, KEY, {"laid": "jax/ alone", "tests": passes})
    store.put_probe(candidate.commit, PARENT, KEY, {"laid": "jax/ alone", "tests": {**fails, nodes[2]: passes[nodes[2]]}})

    def never(*_args: object) -> Path:
        raise AssertionError("a kept pair was laid over again")
    monkeypatch.setattr(confirm_module, "new_overlay_folder", never)
    build = HarvestBuild(Prepared(None, None, None), KEY, tmp_path / "bytecode")  # type: ignore[arg-type]
    result = confirm(history, candidate, build, store)
    assert result["status"] == CONFIRMED and str(result["upstream"]).endswith("/1234")
    assert [as_object(row)["verdict"] for row in as_list(result["tests"])] == [CONFIRMED, CONFIRMED, BINARY]
    kept = json.loads(store.result_path(candidate.commit).read_text())
    assert kept["build_tag"] == KEY.tag and kept["title"] == "Fix foo for empty inputs."
    assert [e["id"] for e in harvested_entries(tmp_path / "known")] == [f"harvest-{candidate.commit[:10]}"]


def test_the_parent_is_not_run_where_no_test_passed_at_the_fix(tiny: tuple[History, dict[str, str]], tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    history, commits = tiny
    candidate = list_candidates(history, commits["base"], "main")[0]
    store = Store(tmp_path / "known" / "harvested")
    nodes = ["tests/foo_test.py::test_top", "tests/foo_test.py::FooTest::test_b", "tests/foo_test.py::FooTest::test_c"]
    store.put_probe(candidate.commit, FIX, KEY, {"laid": "jax/ alone", "tests": {
        node: TestOutcome(SKIPPED, 1, "Test requires a GPU").to_json() for node in nodes}})

    def never(*_args: object) -> Path:
        raise AssertionError("the parent was laid over though nothing passed at the fix")
    monkeypatch.setattr(confirm_module, "new_overlay_folder", never)
    build = HarvestBuild(Prepared(None, None, None), KEY, tmp_path / "bytecode")  # type: ignore[arg-type]
    result = confirm(history, candidate, build, store)
    assert result["status"] == UNRUN and store.probe(candidate.commit, PARENT, KEY) is None
    rows = [as_object(row) for row in as_list(result["tests"])]
    assert [as_object(row["at_parent"])["outcome"] for row in rows] == ["not run"] * 3
    assert all("skipped at the fix" in str(row["why"]) for row in rows)


def test_a_commit_whose_jax_does_not_accept_the_build_is_unrun(tiny: tuple[History, dict[str, str]],
                                                                tmp_path: Path) -> None:
    history, commits = tiny
    candidate = list_candidates(history, commits["base"], "main")[0]
    other = BuildKey("0.3.0", "0.3.0", "3.13.0", (), 4)
    result = confirm(history, candidate, HarvestBuild(Prepared(None, None, None), other, tmp_path), Store(tmp_path / "s"))  # type: ignore[arg-type]
    assert result["status"] == UNRUN and "does not accept jaxlib 0.3.0" in str(result["problem"])
    assert harvested_entries(tmp_path) == []


def test_the_unrun_are_counted_by_why() -> None:
    rows = [{"status": UNRUN, "problem": "", "tests": [{"why": "skipped at the fix here: Skipped: Only works on a GPU"}]},
            {"status": UNRUN, "problem": "", "tests": [{"why": "skipped at the fix here: Test requires jaxlib v0.11.1"}]},
            {"status": UNRUN, "problem": "", "tests": [{"why": "skipped at the fix here: Memories do not work on CPU"}]},
            {"status": UNRUN, "problem": "it adds or changes no test function (only helpers)", "tests": []},
            {"status": UNRUN, "problem": "", "tests": [{"why": "fails at the fix on this build: E boom"}]},
            {"status": CONFIRMED, "problem": "", "tests": []}]
    assert unrun_reasons(rows) == {"skipped on CPU (needs a GPU or TPU)": 2,  # type: ignore[arg-type]
                                   "skipped: needs a newer jaxlib than the build": 1, "no test function changed": 1,
                                   "fails at the fix on this build": 1}


def test_progress_says_the_commit_what_it_came_to_and_the_time_left() -> None:
    candidate = HarvestCandidate("c" * 40, "p" * 40, "2026-07-01", "Fix it", ("tests/a_test.py",))
    result: dict[str, object] = {"status": CONFIRMED, "seconds": 50.0,
                                 "tests": [{"verdict": CONFIRMED}, {"verdict": BINARY}]}
    line = progress_line(2, 6, candidate, result, elapsed=240.0, jobs=2)
    assert line == "[2/6] cccccccccc confirmed: 1 confirmed, 1 binary (50.0 s); about 8 min left"
    assert summary_line([result, {"status": UNRUN}]) == \
        "harvest: 2 commits tried on this build: 1 confirmed, 0 binary (unconfirmed by overlay), 1 unrun"
    assert time_line([result, {"status": UNRUN, "seconds": 3.0, "tests": []}, {**result, "seconds": 70.0}]) == \
        "time per commit that ran its tests: median 60 s, mean 60 s, 50 to 70 s (2 commits)"


def test_one_commits_trouble_is_said_and_the_others_go_on(monkeypatch: pytest.MonkeyPatch,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    first, second = (HarvestCandidate(c * 40, "p" * 40, "2026-07-01", "Fix", ("tests/a_test.py",)) for c in "ab")

    def confirm_one(_history: object, candidate: HarvestCandidate, *_rest: object) -> dict[str, object]:
        if candidate is first:
            raise OSError(28, "No space left on device")
        return {"status": UNRUN, "seconds": 1.0, "tests": [], "problem": "it adds or changes no test function"}
    monkeypatch.setattr(command_module, "confirm", confirm_one)
    command_module._run_all(None, [first, second], None, None, jobs=2)  # type: ignore[arg-type]
    said = capsys.readouterr().out
    assert "aaaaaaaaaa: not confirmed now, tried again next time: [Errno 28] No space left on device" in said
    assert "bbbbbbbbbb unrun: it adds or changes no test function" in said


def test_a_range_the_clone_lacks_is_a_usage_error(tiny: tuple[History, dict[str, str]], tmp_path: Path) -> None:
    history, commits = tiny
    _git(history.path, "tag", "jax-v0.1.0", commits["base"])  # a clone of JAX has release tags
    from kit.config import load_matrix
    from kit.errors import UsageError
    matrix = load_matrix(Path(__file__).resolve().parent.parent / "matrix.toml")
    with pytest.raises(UsageError, match="'nonexist' .. --until 'HEAD' is not a range"):
        command_module.harvest_main(matrix, ["--harvest", "--since", "nonexist", "--build", "0.11.0", "--jax-repo",
                                             str(history.path)], print, tmp_path)
    with pytest.raises(UsageError, match="is not a release tag"):
        command_module.harvest_main(matrix, ["--harvest", "--since", "abc"], print, tmp_path)


def test_a_side_stopped_by_ctrl_c_is_not_an_outcome(tmp_path: Path) -> None:
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "stop_test.py").write_text(
        "import os, signal\n\ndef test_stopped():\n    os.kill(os.getpid(), signal.SIGINT)\n")
    with pytest.raises(SideInterrupted, match="pytest was stopped"):
        run_side(Environment(Path(sys.executable), {}, "existing"), tmp_path,
                 [TestFunction("tests/stop_test.py", "", "test_stopped")])


def test_a_range_with_no_commit_is_refused_in_words(tiny: tuple[History, dict[str, str]]) -> None:
    # A held-out fault trial: --since newer than --until, or both the same, ended "0 candidates", exit 0, after
    # building the test tools' environment: a CI gate on the harvest passed with nothing tested.
    from kit.errors import UsageError
    from kit.known.harvest.command import _refuse_an_empty_range

    history, commits = tiny
    first, last = list(commits.values())[0], list(commits.values())[-1]
    with pytest.raises(UsageError, match="--since is newer than --until"):
        _refuse_an_empty_range(history, last, first)
    with pytest.raises(UsageError, match="both name the same commit"):
        _refuse_an_empty_range(history, last, last)
    _refuse_an_empty_range(history, first, last)  # a range with commits: no refusal


def test_a_message_names_this_machines_folders_by_what_they_are(tmp_path: Path) -> None:
    from kit.known.harvest.pytest_run import named_folders
    env, tests = tmp_path / "envs" / "jax-0.5.3-cpu", tmp_path / "harvest-x"
    said = (f"E   ImportError: cannot import name 'prng' from 'jax._src' ({env}/lib/python3.13/site-packages/jax/_src/"
            f"__init__.py)\n{tests}/tests/api_test.py:12: in <module>")
    named = named_folders(said, {env: "<env>", tests: "<tests>"})
    assert named == ("E   ImportError: cannot import name 'prng' from 'jax._src' (<env>/lib/python3.13/site-packages/"
                     "jax/_src/__init__.py)\n<tests>/tests/api_test.py:12: in <module>")


def test_the_catalogues_data_holds_no_folder_of_the_machine_that_harvested_it() -> None:
    # Its messages are shown in audits and `known`, which are pasted into bug threads.
    catalogue = Path(__file__).resolve().parent.parent / "known"
    found = [path.name for path in catalogue.rglob("*.json")
             if any(folder in path.read_text(encoding="utf-8") for folder in ("/root/", "/tmp/", "/work/", "/home/"))]
    assert found == []
