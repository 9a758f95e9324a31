"""kit.history.commits: what a report says about a commit, and what changed in a range."""

from __future__ import annotations


import pytest

from fake_jax import BUMP_TITLE, FIX_TITLE, KERNELS_TITLE, MERGE_TITLE, commit_titled, make_repo
from kit.history.commits import (
    changed_files,
    python_changes,
    commit_info,
    compare_url,
    compiled_changes,
    headlines,
    pr_number,
    read_text,
)
from kit.history.source import History


@pytest.fixture(scope="module")
def history(tmp_path_factory: pytest.TempPathFactory) -> History:
    return History(make_repo(tmp_path_factory.mktemp("commits") / "jax"), "test")


@pytest.mark.parametrize(("message", "pr"), [
    ("Merge pull request #27094 from vfdev-5:fix-tsan\n\nFix it", 27094),
    ("Add support for X (#26812)\n\nPiperOrigin-RevId: 731", 26812),
    ("PR #26345: scaled matmul\n\nImported from GitHub PR https://github.com/jax-ml/jax/pull/26345", 26345),
    ("Add and test support for partitioning of batch dimensions in lax.linalg.\n\nPiperOrigin-RevId: 731", None),
])
def test_pr_number_from_the_message(message: str, pr: int | None) -> None:
    assert pr_number(message) == pr


def test_commit_info_names_everything_a_report_needs(history: History) -> None:
    fix = commit_titled(history.path, FIX_TITLE)
    info = commit_info(history, fix)
    assert (info.hash, info.title, info.pr, info.files) == (fix, FIX_TITLE, 4242, ("jax/_src/linalg.py",))
    assert info.author == "Jax Dev <dev@example.com>"
    assert info.date.startswith("2025-01-")
    assert info.url == f"https://github.com/jax-ml/jax/commit/{fix}"
    assert info.to_json()["pr_url"] == "https://github.com/jax-ml/jax/pull/4242"
    merge = commit_info(history, commit_titled(history.path, MERGE_TITLE))
    assert len(merge.parents) == 2
    assert merge.pr == 4242


def test_compiled_changes_are_the_non_python_files_under_jaxlib(history: History) -> None:
    kernels = commit_titled(history.path, KERNELS_TITLE)
    assert compiled_changes(history, "jax-v0.1.0", "jax-v0.2.0") == ["jaxlib/kernels.cc"]
    assert "jaxlib/lapack.py" in changed_files(history, "jax-v0.1.0", "jax-v0.2.0")
    assert changed_files(history, f"{kernels}^", kernels) == ["jaxlib/kernels.cc"]


def test_headlines_and_text_at_a_tag(history: History) -> None:
    fix = commit_titled(history.path, FIX_TITLE)
    assert headlines(history, [fix])[fix][1] == FIX_TITLE
    assert "## jax 0.2.0" in (read_text(history, "jax-v0.2.0", "CHANGELOG.md") or "")
    assert read_text(history, "jax-v0.1.0", "no/such/file") is None
    assert compare_url("a", "b") == "https://github.com/jax-ml/jax/compare/a...b"


def test_python_changes_leave_out_the_version_file_alone(history: History) -> None:
    # The version bump changes jax/version.py only: its Python is its parent's, so a probe of one stands for the other.
    bump = commit_titled(history.path, BUMP_TITLE)
    assert python_changes(history, f"{bump}^", bump) == []
    fix = commit_titled(history.path, FIX_TITLE)
    assert "jax/_src/linalg.py" in python_changes(history, f"{fix}^", fix)
    assert python_changes(history, "not-a-commit", bump) == ["?"]  # unreadable: never taken as the same Python
