"""A clone whose history stops inside the range: refused with one sentence, never a wrong commit.

A shallow clone (or a graft) shows the commit at its edge as a root: the line
seemed to start there, and the search named a commit whose "files changed"
were the whole tree, while the report called it "a filtered or grafted clone".
A real root, as in the CI bundle's filtered history, is walked as before
(`tests/test_history_commit_range.py::test_no_common_commit_on_the_line_takes_the_old_tag_itself`).
docs/faults.md, "Environments and history".
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from fake_jax import make_repo, small_history
from kit.errors import UsageError
from kit.history.commit_range import release_range, resolve
from kit.history.source import History


def _git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(cwd), *args], check=True, capture_output=True, text=True).stdout


@pytest.fixture(scope="module")
def full(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_repo(tmp_path_factory.mktemp("cut") / "jax")


def test_a_shallow_clone_that_stops_inside_the_range_is_refused_with_the_unshallow_tip(full: Path,
                                                                                        tmp_path: Path) -> None:
    clone = tmp_path / "shallow"
    _git(tmp_path, "clone", "-q", "--depth", "2", f"file://{full}", str(clone))
    _git(clone, "fetch", "-q", "--depth", "1", "origin", "refs/tags/jax-v0.1.0:refs/tags/jax-v0.1.0",
         "refs/tags/jax-v0.2.0:refs/tags/jax-v0.2.0")
    history = History(clone, f"{clone} (--jax-repo)")
    edge = _git(clone, "rev-list", "--first-parent", "--reverse", "jax-v0.1.0..jax-v0.2.0").split()[0]
    with pytest.raises(UsageError) as refused:
        release_range(history, "0.1.0", "0.2.0")
    assert refused.value.message == (
        f"{clone} (--jax-repo) is a shallow clone whose history stops at {edge[:10]}, between jax-v0.1.0 and "
        "jax-v0.2.0: the commits between them cannot be walked, and the first one left would look like it changed "
        "the whole tree")
    assert refused.value.tip.startswith(f"deepen it: git -C {clone} fetch --unshallow")
    _git(clone, "fetch", "-q", "--unshallow", "origin")
    assert release_range(history, "0.1.0", "0.2.0").old_end == resolve(history, "jax-v0.1.0")


def test_a_shallow_clone_holding_the_whole_range_is_walked(full: Path, tmp_path: Path) -> None:
    clone = tmp_path / "deep-enough"
    _git(tmp_path, "clone", "-q", "--depth", "25", "--no-single-branch", f"file://{full}", str(clone))
    _git(clone, "fetch", "-q", "origin", "refs/tags/*:refs/tags/*")
    found = release_range(History(clone, "test"), "0.1.0", "0.2.0")
    assert "is on jax-v0.2.0's first-parent line" in found.shape


def test_a_graft_that_hides_parents_inside_the_range_is_refused(tmp_path: Path) -> None:
    repo = small_history(tmp_path / "branch", "branch")
    history = History(repo, "test")
    first = release_range(history, "0.1.1", "0.2.0").commits[0]
    _git(repo, "replace", "--graft", first)  # shown as a root from now on; its object still names its parent
    with pytest.raises(UsageError, match=f"shows {first[:10]} without the parents its commit names"):
        release_range(history, "0.1.1", "0.2.0")


def test_a_real_root_is_still_walked(tmp_path: Path) -> None:
    history = History(small_history(tmp_path / "rootless", "rootless"), "test")
    assert "(a filtered clone whose jax-v0.1.0 is a root of its own)" in release_range(history, "0.1.0", "0.2.0").shape
