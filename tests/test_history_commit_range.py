"""kit.history.commit_range: the commits between two tags as one list, for the shapes JAX's history takes."""

from __future__ import annotations


import pytest

from fake_jax import MERGE_TITLE, PREP_TITLE, FIX_TITLE, commit_titled, make_repo, small_history
from kit.errors import UsageError
from kit.history.commit_range import merged_branch, release_range, resolve, tag
from kit.history.source import History


@pytest.fixture(scope="module")
def repos(tmp_path_factory: pytest.TempPathFactory) -> dict[str, History]:
    root = tmp_path_factory.mktemp("ranges")
    return {"line": History(make_repo(root / "line"), "test"),
            "branch": History(small_history(root / "branch", "branch"), "test"),
            "unmerged": History(small_history(root / "unmerged", "unmerged"), "test"),
            "rootless": History(small_history(root / "rootless", "rootless"), "test")}


def titles(history: History, commits: tuple[str, ...]) -> list[str]:
    from kit.history.commits import headlines

    heads = headlines(history, list(commits))
    return [heads[c][1].split()[0] for c in commits]


def test_tag_names_a_release() -> None:
    assert tag("0.5.3") == "jax-v0.5.3"


def test_older_tag_on_the_line_is_the_old_end(repos: dict[str, History]) -> None:
    history = repos["line"]
    found = release_range(history, "0.1.0", "0.2.0")
    assert found.old_end == resolve(history, "jax-v0.1.0")
    assert found.commits[-1] == resolve(history, "jax-v0.2.0")
    assert "is on jax-v0.2.0's first-parent line" in found.shape
    assert found.off_line == ()
    assert commit_titled(history.path, FIX_TITLE) not in found.commits  # it is on the merged branch, not the line
    assert commit_titled(history.path, MERGE_TITLE) in found.commits


def test_patch_release_cut_on_a_branch_starts_at_the_branch_point(repos: dict[str, History]) -> None:
    history = repos["branch"]
    found = release_range(history, "0.1.1", "0.2.0")
    assert titles(history, found.candidates) == ["m1", "m2", "m3", "m4", "m5"]
    assert titles(history, found.off_line) == ["b1"]
    assert "was cut on a release branch" in found.shape
    assert found.old_name == found.old_end[:10]


def test_patch_release_never_merged_back_says_its_branch_is_outside(repos: dict[str, History]) -> None:
    history = repos["unmerged"]
    found = release_range(history, "0.1.1", "0.2.0")
    assert titles(history, found.candidates) == ["m1", "m2", "m3"]
    assert titles(history, found.off_line) == ["b1"]
    assert "is not an ancestor of jax-v0.2.0" in found.shape
    assert "not in this range" in found.shape


def test_merge_back_of_the_release_branch_opens_onto_the_branch(repos: dict[str, History]) -> None:
    history = repos["branch"]
    merge = release_range(history, "0.1.1", "0.2.0").candidates[3]
    branch = merged_branch(history, merge)
    assert branch is not None
    assert titles(history, branch.candidates) == ["m1", "b1"]
    assert merged_branch(history, branch.candidates[1]) is None  # b1 is a plain commit


def test_no_common_commit_on_the_line_takes_the_old_tag_itself(repos: dict[str, History]) -> None:
    history = repos["rootless"]
    found = release_range(history, "0.1.0", "0.2.0")
    assert titles(history, found.candidates) == ["r1", "s1", "s2"]
    assert "a filtered clone whose jax-v0.1.0 is a root of its own" in found.shape


def test_merged_pull_request_is_opened_from_where_it_left_main(repos: dict[str, History]) -> None:
    history = repos["line"]
    branch = merged_branch(history, commit_titled(history.path, MERGE_TITLE))
    assert branch is not None
    assert branch.commits == (commit_titled(history.path, PREP_TITLE), commit_titled(history.path, FIX_TITLE))
    assert "is a merge" in branch.shape


@pytest.mark.parametrize(("old", "new", "message"), [("0.2.0", "0.1.0", "holds no commit"),
                                                       ("0.1.0", "0.9.0", "jax-v0.9.0 is not a commit")])
def test_impossible_ranges_are_one_sentence(repos: dict[str, History], old: str, new: str, message: str) -> None:
    with pytest.raises(UsageError, match=message):
        release_range(repos["line"], old, new)
