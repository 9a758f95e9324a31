"""kit/bisect/commits/runnable.py: which commits JAX itself runs on which build, found with few checks, and kept.

The check (lay a commit over a build, run JAX) is a table here: which (commit, jaxlib) pairs import. What is
tested is how the spans are searched, how commits are placed on builds, and what the pair store keeps.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from kit.bisect.commits.candidates import CommitCandidate
from kit.bisect.commits.runnable import PairStore, Runnable, assign_builds, span_on
from kit.history.version_file import JaxlibRange
from kit.install import JAX_ALONE, WITH_JAXLIB
from kit.bisect.commits.builds import Build
from kit.run.jax_runs import JaxRuns

OLD = Build("0.4.35", "0.4.35", "3.12", True, "bad")
NEW = Build("0.4.36", "0.4.36", "3.12", True, "good")
BOTH = JaxlibRange("0.4.35", "0.4.36")
RENAMED = "ImportError: cannot import name '_jax' from 'jaxlib'"


def _commits(count: int, accepts: JaxlibRange = BOTH) -> list[CommitCandidate]:
    return [CommitCandidate(f"{i:040x}", (), None, OLD.python, OLD.jaxlib, commit=f"{i:040x}", build=OLD,
                            accepts=accepts, title=f"commit {i}", date="2024-12-01") for i in range(count)]


class Table:
    """JAX runs for commit i on jaxlib j when ``runs[j]`` holds i (``alone[j]`` with jax/ alone laid, else the
    same); counts what was asked."""

    def __init__(self, runs: dict[str, set[int]], error: str = RENAMED,
                 alone: dict[str, set[int]] | None = None) -> None:
        self.runs, self.error, self.asked = runs, error, []  # type: ignore[var-annotated]
        self.alone = alone or {}

    def __call__(self, candidate: CommitCandidate) -> JaxRuns:
        assert candidate.build is not None
        index = int(candidate.commit, 16)
        self.asked.append((index, candidate.build.jaxlib))
        runs = self.alone.get(candidate.build.jaxlib, self.runs[candidate.build.jaxlib]) \
            if candidate.laid == JAX_ALONE else self.runs[candidate.build.jaxlib]
        ok = index in runs
        return JaxRuns(ok, "" if ok else self.error, (), 0.5)


def _runnable(tmp_path: Path, table: Table) -> Runnable:
    return Runnable(PairStore(tmp_path / "runnable", "cpu"), table)


def test_one_build_asks_nothing_and_changes_nothing(tmp_path: Path) -> None:
    table = Table({"0.4.35": set()})
    commits = _commits(5)
    assert assign_builds(commits, [OLD, OLD], _runnable(tmp_path, table)) == commits
    assert table.asked == []


def test_each_commit_goes_on_the_first_build_that_runs_it(tmp_path: Path) -> None:
    # The old build runs a prefix (0..5), the new one a suffix (4..9): 4 and 5 stay on the preferred old build.
    table = Table({"0.4.35": set(range(6)), "0.4.36": set(range(4, 20))})
    placed = assign_builds(_commits(10), [OLD, NEW], _runnable(tmp_path, table))
    assert [c.jaxlib for c in placed] == ["0.4.35"] * 6 + ["0.4.36"] * 4
    assert all(c.problem == "" for c in placed)
    assert placed[7].build == NEW
    # ends and a bisection on the old build, both ends again with jax/ alone there, one far end on the new
    assert len(table.asked) <= 2 + 4 + 2 + 1


def test_a_commit_no_build_runs_carries_what_jax_died_of_on_each(tmp_path: Path) -> None:
    table = Table({"0.4.35": set(range(4)), "0.4.36": set(range(7, 10))})
    placed = assign_builds(_commits(10), [OLD, NEW], _runnable(tmp_path, table))
    assert [i for i, c in enumerate(placed) if c.problem] == [4, 5, 6]
    assert placed[5].build is None
    assert placed[5].jaxlib is None
    assert placed[5].problem == (
        "unrun: JAX itself cannot run it on any jaxlib build here, with its jaxlib Python or jax/ alone ("
        f"on jaxlib 0.4.35 with jax/ and jaxlib Python: {RENAMED}; on jaxlib 0.4.35 with jax/ alone: {RENAMED}; "
        f"on jaxlib 0.4.36 with jax/ and jaxlib Python: {RENAMED}; on jaxlib 0.4.36 with jax/ alone: {RENAMED})")


MOSAIC = "AttributeError: module 'jaxlib.mosaic.dialect.gpu._mosaic_gpu_gen_ops' has no attribute 'WarpMapOp'"


def test_past_where_its_jaxlib_python_breaks_a_commit_runs_with_jax_alone_on_the_same_build(tmp_path: Path) -> None:
    # 0.9.2 -> 0.10.0: from the 5th commit on, the commit's jaxlib/mosaic Python names an op the old build's
    # generated module lacks; its jax/ alone still runs there (the fix, 2d252fb19d, was in jax/_src/scipy/fft.py).
    table = Table({"0.4.35": set(range(4)), "0.4.36": set()}, MOSAIC, alone={"0.4.35": set(range(10))})
    placed = assign_builds(_commits(10), [OLD, NEW], _runnable(tmp_path, table))
    assert [c.laid for c in placed] == [WITH_JAXLIB] * 4 + [JAX_ALONE] * 6
    assert [c.jaxlib for c in placed] == ["0.4.35"] * 10
    assert all(c.problem == "" for c in placed)


def test_a_commit_that_runs_in_no_form_is_unrun(tmp_path: Path) -> None:
    table = Table({"0.4.35": set(range(4)), "0.4.36": set(range(8, 10))}, MOSAIC,
                  alone={"0.4.35": set(range(6)), "0.4.36": set(range(8, 10))})
    placed = assign_builds(_commits(10), [OLD, NEW], _runnable(tmp_path, table))
    assert [i for i, c in enumerate(placed) if c.problem.startswith("unrun: ")] == [6, 7]
    assert [c.laid for c in placed[4:6]] == [JAX_ALONE] * 2


def test_jax_alone_is_another_pair_in_the_store(tmp_path: Path) -> None:
    store = PairStore(tmp_path, "cpu")
    [commit] = _commits(1)
    alone = dataclasses.replace(commit, laid=JAX_ALONE)
    assert store.key(commit) != store.key(alone)
    assert "jax-alone" in store.key(alone)
    store.put(commit, JaxRuns(False, MOSAIC, (), 1.0))
    assert store.get(alone) is None


def test_a_commit_that_already_has_a_problem_keeps_it(tmp_path: Path) -> None:
    commits = _commits(3)
    commits[1] = CommitCandidate(commits[1].commit, (), None, None, None, problem="no jaxlib build here runs it",
                                 commit=commits[1].commit)
    placed = assign_builds(commits, [OLD, NEW], _runnable(tmp_path, Table({"0.4.35": {0, 1, 2}, "0.4.36": set()})))
    assert placed[1].problem == "no jaxlib build here runs it"


def test_when_the_far_end_runs_one_check_answers_for_the_whole_build(tmp_path: Path) -> None:
    table = Table({"0.4.35": set(range(50))})
    span = span_on(_commits(50), OLD, list(range(50)), _runnable(tmp_path, table), suffix=False)
    assert span.runs == frozenset(range(50))
    assert span.stopped == ""
    assert table.asked == [(49, "0.4.35")]


def test_the_span_is_bisected_in_few_checks_and_says_where_it_stopped(tmp_path: Path) -> None:
    table = Table({"0.4.36": set(range(37, 64))})
    span = span_on(_commits(64), NEW, list(range(64)), _runnable(tmp_path, table), suffix=True)
    assert span.runs == frozenset(range(37, 64))
    assert span.stopped == RENAMED
    assert len(table.asked) <= 2 + 6  # both ends, then log2(64)


def test_nothing_runs_when_even_the_near_end_fails(tmp_path: Path) -> None:
    table = Table({"0.4.35": set()}, error="AttributeError: module 'jaxlib' has no attribute 'xla_client'")
    span = span_on(_commits(8), OLD, list(range(8)), _runnable(tmp_path, table), suffix=False)
    assert span.runs == frozenset()
    assert span.stopped.startswith("AttributeError")
    assert span_on(_commits(8), OLD, [], _runnable(tmp_path, table), suffix=False).runs == frozenset()


def test_pairs_are_asked_once_per_run_and_kept_for_the_next(tmp_path: Path) -> None:
    table = Table({"0.4.35": {0}})
    runnable = _runnable(tmp_path, table)
    [first, second] = _commits(2)
    assert runnable(first).ok
    assert not runnable(second).ok
    assert runnable(first).ok
    assert len(table.asked) == 2
    assert runnable.asked == 2
    assert runnable.seconds == 1.0
    later = _runnable(tmp_path, Table({"0.4.35": set()}))  # a new run: both answers come from disk
    assert later(first).ok
    assert later(second).error == RENAMED
    assert later.asked == 0


@pytest.mark.parametrize("error", ["import jax did not finish in 180 s", "import jax was killed by signal 9",
                                   "ValueError: bad marshal data (unknown type code)"])
def test_a_failure_that_may_be_the_machines_is_not_kept(tmp_path: Path, error: str) -> None:
    store = PairStore(tmp_path, "cpu")
    [commit] = _commits(1)
    store.put(commit, JaxRuns(False, error, (), 1.0))
    assert store.get(commit) is not None  # known for this run
    assert list(tmp_path.iterdir()) == []
    assert PairStore(tmp_path, "cpu").get(commit) is None


def test_the_key_holds_the_build_and_the_backend(tmp_path: Path) -> None:
    [commit] = _commits(1)
    on_new = CommitCandidate(commit.commit, (), None, "3.12", "0.4.36", commit=commit.commit, build=NEW, accepts=BOTH)
    store = PairStore(tmp_path, "cpu")
    assert len({store.key(commit), store.key(on_new), PairStore(tmp_path, "cuda").key(commit)}) == 3
    assert store.key(commit).startswith(commit.commit[:12] + "-jaxlib-0.4.35-")


def test_fresh_reads_no_kept_pair_and_a_hostile_one_is_asked_again(tmp_path: Path) -> None:
    [commit] = _commits(1)
    store = PairStore(tmp_path, "cpu")
    store.put(commit, JaxRuns(True, "", (), 1.0))
    assert PairStore(tmp_path, "cpu", read=False).get(commit) is None
    kept = tmp_path / f"{store.key(commit)}.json"
    for content in ('{"ok": "yes"}', "[1]", "{torn", json.dumps({"ok": True, "seconds": "x"})):
        kept.write_text(content)
        assert PairStore(tmp_path, "cpu").get(commit) is None, content
