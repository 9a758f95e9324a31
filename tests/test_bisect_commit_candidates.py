"""kit/bisect/commits/candidates.py: each commit as a candidate on the build it runs on, or with why none does.

The commit search's own world (a small git history) is in test_bisect_commit_search.py; here the candidate is
built directly, and once over the real JAX history between two releases when a clone of it is at hand.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from kit.bisect.commits.candidates import CommitCandidate, _candidate, commit_candidates, forced_on, on_build
from kit.history.version_file import JaxlibRange
from kit.bisect.commits.builds import Build

COMMIT = "f93c2a1aa51d0d124bf0632eacbe95c261dacd57"
BAD = Build("0.5.2", "0.5.1", "3.12", built=True, side="bad")
GOOD = Build("0.5.3", "0.5.3", "3.13", built=False, side="good")
ACCEPTS_BOTH = JaxlibRange("0.5.0", "0.5.3")
JAX_CLONE = Path(os.environ.get("KIT_JAX_REPO") or "/nonexistent")  # as in test_bisect_commits_integration


def test_a_commit_runs_on_the_built_build_it_accepts() -> None:
    candidate = _candidate(COMMIT, ACCEPTS_BOTH, ("2025-02-27T10:00:00Z", "Fix slogdet sharding"), [GOOD, BAD])
    # Both accept it; the built one is taken whatever the order (nothing new is built for a commit).
    assert (candidate.build, candidate.jaxlib, candidate.python, candidate.problem) == (BAD, "0.5.1", "3.12", "")
    assert (candidate.version, candidate.short, candidate.uploaded) == (COMMIT, COMMIT[:10], "2025-02-27")
    assert candidate.jax_version == "0.5.3.dev20250227+f93c2a1aa5"


def test_a_commit_no_build_accepts_carries_why_and_no_python() -> None:
    candidate = _candidate(COMMIT, JaxlibRange("0.5.4", "0.5.4"), ("2025-03-01", "Bump"), [BAD, GOOD])
    assert candidate.build is None
    assert candidate.python is None
    assert candidate.jaxlib is None
    assert candidate.problem == ("no jaxlib build here runs it: it needs jaxlib >= 0.5.4 and <= 0.5.4; the builds at "
                                 "hand are jaxlib 0.5.1, jaxlib 0.5.3")


def test_a_commit_without_a_version_file_is_skipped_with_its_reason() -> None:
    candidate = _candidate(COMMIT, None, ("", ""), [BAD])
    assert candidate.problem.startswith("no jaxlib build here runs it: its jax/version.py names no jaxlib range")
    assert candidate.uploaded is None
    assert candidate.jax_version == COMMIT[:10]


def test_on_another_build_the_same_commit_is_a_new_key_on_that_build() -> None:
    # A distinct version key: the probe cache and the search must not take the two runs for one.
    candidate = _candidate(COMMIT, ACCEPTS_BOTH, ("2025-02-27", "t"), [BAD, GOOD])
    other = on_build(candidate, GOOD)
    assert other is not None
    assert (other.version, other.jaxlib, other.python, other.build) == (f"{COMMIT}@jaxlib-0.5.3", "0.5.3", "3.13", GOOD)
    assert (other.commit, other.title, other.accepts) == (COMMIT, "t", ACCEPTS_BOTH)


def test_on_a_build_the_commit_refuses_there_is_no_candidate() -> None:
    candidate = _candidate(COMMIT, JaxlibRange("0.5.0", "0.5.2"), ("2025-02-27", "t"), [BAD])
    assert on_build(candidate, GOOD) is None
    assert on_build(CommitCandidate(COMMIT, (), None, None, None, commit=COMMIT), BAD) is None  # no range known


def test_forced_onto_a_newer_jaxlib_the_commit_names_that_jaxlib_as_its_version_and_is_a_key_apart() -> None:
    # JAX's import refuses a jaxlib newer than jax.__version__, which the overlay stamps: the build's version
    # there passes that check alone, and the probe is keyed and named as forced.
    old = _candidate(COMMIT, JaxlibRange("0.5.1", "0.5.2"), ("2025-02-27T10:00:00Z", "Fix"), [BAD])
    forced = forced_on(old, GOOD)
    assert forced is not None
    assert forced.forced
    assert forced.jaxlib == "0.5.3"
    assert forced.build == GOOD
    assert forced.version == f"{COMMIT}@jaxlib-0.5.3-forced" != on_build(old, BAD).version  # type: ignore[union-attr]
    assert forced.jax_version == "0.5.3.dev20250227+f93c2a1aa5.forced"
    assert forced_on(old, BAD) is None  # accepted anyway: nothing to force
    assert forced_on(old, Build("0.5.0", "0.5.0", "3.12", True)) is None  # older than its minimum: never forced


def test_a_patch_release_tag_stands_as_the_old_end_where_its_branch_point_runs_on_no_build(tmp_path: Path) -> None:
    # jax-v0.1.1 is cut on a branch from m1, whose version.py accepts only jaxlib 0.1.0: no build at hand runs it,
    # so the search could not start. The tag itself, on its own release's build, is the old end instead.
    from fake_jax import _Commit, _files, write_history
    from kit.bisect.commits.candidates import tag_as_old_end
    from kit.history.commit_range import release_range
    from kit.history.source import History

    commits = [_Commit(1, "m1 base", _files("0.1.0", "0.1.0"), ()),
               _Commit(2, "m2 main moves on", _files("0.2.0", "0.1.1", noise=2), (1,)),
               _Commit(3, "m3 release 0.2.0", _files("0.2.0", "0.2.0", noise=3), (2,)),
               _Commit(4, "b1 patch release 0.1.1", _files("0.1.1", "0.1.0", noise=1), (1,))]
    history = History(write_history(tmp_path / "jax", commits, {"jax-v0.1.1": 4, "jax-v0.2.0": 3}, {"main": 3}),
                      "test")
    builds = [Build("0.1.1", "0.1.1", "3.12", True, "bad"), Build("0.2.0", "0.2.0", "3.12", True, "good")]
    commit_range = release_range(history, "0.1.1", "0.2.0")
    candidates = commit_candidates(history, commit_range, builds)
    assert candidates[0].problem  # the branch point m1: jaxlib 0.1.0 only
    placed, said = tag_as_old_end(history, "jax-v0.1.1", candidates, builds)
    assert placed[0].title == "b1 patch release 0.1.1"
    assert placed[0].build == builds[0]
    assert not placed[0].problem
    assert placed[1:] == candidates[1:]
    assert said.startswith(f"the branch point {candidates[0].short} runs on no build here")
    assert "jax-v0.1.1 itself" in said
    runnable_start = [candidates[0].__class__(**{**candidates[0].__dict__, "problem": ""})] + candidates[1:]
    assert tag_as_old_end(history, "jax-v0.1.1", runnable_start, builds) == (runnable_start, "")  # nothing to replace


@pytest.mark.skipif(not JAX_CLONE.is_dir(), reason="KIT_JAX_REPO does not name a clone of JAX")
def test_the_real_commits_between_two_releases_each_get_a_build_or_a_reason() -> None:
    from kit.history.commit_range import release_range
    from kit.history.source import History

    history = History(JAX_CLONE, "--jax-repo")
    builds = [Build("0.4.35", "0.4.35", "3.12", True, "bad"), Build("0.4.36", "0.4.36", "3.12", False, "good")]
    candidates = commit_candidates(history, release_range(history, "0.4.35", "0.4.36"), builds)
    assert len(candidates) > 10
    assert len({c.commit for c in candidates}) == len(candidates)
    assert all(len(c.commit) == 40 and c.title and c.date for c in candidates)
    for c in candidates:  # every one runs on a build it accepts, or says why not
        assert (c.build is not None and c.accepts is not None and c.accepts.accepts(c.build.jaxlib)) or \
            c.problem.startswith("no jaxlib build here runs it: ")
    assert candidates[-1].jaxlib == "0.4.36"  # the release commit itself needs the new jaxlib
