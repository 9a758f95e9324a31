"""kit.history.twins: a release branch's cherry-pick and its twin on the main line, in a real git history."""

from __future__ import annotations

from pathlib import Path

import pytest

from fake_jax import _Commit, _files, commit_titled, write_history
from kit.history.source import History
from kit.history.twins import branch_twins, first_release, main_line_twin, release_branch

FIX = "Fix the batching rule of cumsum (#4711)"
ADAPTED = "Guard the new lowering behind a flag"


@pytest.fixture(scope="module")
def history(tmp_path_factory: pytest.TempPathFactory) -> History:
    """main: m1, the fix (RevId 111), the flag change, m4; release/0.1.1 from m1: both picked, the second adapted."""
    base = _files()
    fixed = {**base, "jax/_src/noise.py": "NOISE = 7\n"}
    flagged = {**fixed, "jax/_src/linalg.py": base["jax/_src/linalg.py"] + "FLAG = True\n"}
    commits = [
        _Commit(1, "m1 base", base, ()),
        _Commit(2, f"{FIX}\n\nPiperOrigin-RevId: 111", fixed, (1,)),
        _Commit(3, ADAPTED, flagged, (2,)),
        _Commit(4, "m4 later work", {**flagged, "CHANGELOG.md": "later\n"}, (3,)),
        _Commit(5, f"{FIX}\n\nPiperOrigin-RevId: 111", fixed, (1,)),  # the pick: same patch, same stamp
        _Commit(6, ADAPTED, {**fixed, "jax/_src/linalg.py": base["jax/_src/linalg.py"] + "FLAG = False\n"}, (5,)),
        _Commit(7, "b3 Prepare release 0.1.1", {**fixed, "CHANGELOG.md": "0.1.1\n"}, (6,)),
    ]
    path = write_history(tmp_path_factory.mktemp("twins") / "jax", commits, {"jax-v0.1.1": 7, "jax-v0.2.0": 4},
                         {"main": 4})
    return History(path, "test")


def _on(history: History, title: str, main: bool) -> str:
    import subprocess

    ref = "main" if main else "jax-v0.1.1"
    out = subprocess.run(["git", "-C", str(history.path), "log", "--format=%H %s", ref], capture_output=True,
                         text=True, check=True).stdout
    return next(line.split(" ", 1)[0] for line in out.splitlines() if line.split(" ", 1)[1] == title)


def test_a_pick_with_copybaras_stamp_finds_its_twin_by_it(history: History) -> None:
    twin = main_line_twin(history, _on(history, FIX, main=False))
    assert twin is not None
    assert twin.commit == _on(history, FIX, main=True)
    assert twin.how == "PiperOrigin-RevId 111"


def test_a_pick_adapted_to_the_branch_is_matched_by_title_and_said_so(history: History) -> None:
    twin = main_line_twin(history, _on(history, ADAPTED, main=False))
    assert twin is not None
    assert twin.commit == _on(history, ADAPTED, main=True)
    assert twin.how.startswith("same title (the patches differ")


def test_a_main_line_commit_and_a_branch_only_commit_have_no_twin(history: History) -> None:
    assert main_line_twin(history, _on(history, FIX, main=True)) is None
    assert main_line_twin(history, commit_titled(history.path, "b3 Prepare release 0.1.1")) is None


def test_a_real_cherry_pick_on_jax_v0_9_0s_release_branch_finds_its_main_line_twin() -> None:
    """jax-v0.9.0 was cut on a branch with ten picks; 2de5b8b070 ("Use maxsize=None with trace_to_jaxpr's
    weakref_lru_cache ...") carries PiperOrigin-RevId 858211335, as main's d3c2609167 does (`git log main
    --grep 'PiperOrigin-RevId: 858211335'`). Runs where KIT_JAX_REPO names a whole clone."""
    import os

    clone = os.environ.get("KIT_JAX_REPO")
    if not clone:
        pytest.skip("KIT_JAX_REPO does not name a clone of https://github.com/jax-ml/jax")
    twin = main_line_twin(History(Path(clone), "KIT_JAX_REPO"), "2de5b8b070")
    assert twin is not None
    assert twin.commit.startswith("d3c2609167")
    assert twin.how == "PiperOrigin-RevId 858211335"


SCAN_FIX = "Fix the transpose of scan with unit-length axes"


def test_a_pick_without_stamps_finds_its_twin_inside_a_merged_pull_request_by_title_author_and_date(
        tmp_path: Path) -> None:
    # The twin reached main inside a merged branch (not on main's first-parent line), the pick carries no
    # RevId and no "cherry picked from", and its patch differs by a context line: only the title, the author
    # and the author date, which git cherry-pick keeps, tie them.
    base = _files()
    picked_at = 1736500000
    fixed = {**base, "jax/_src/noise.py": "NOISE = 8\n"}
    commits = [
        _Commit(1, "m1 base", base, ()),
        _Commit(2, SCAN_FIX, fixed, (1,), author_date=picked_at),  # on the pull request's branch
        _Commit(3, "m2 main moves on", {**base, "CHANGELOG.md": "m2\n"}, (1,)),
        _Commit(4, "Merge pull request #50 from dev:scan", {**fixed, "CHANGELOG.md": "m2\n"}, (3, 2)),
        _Commit(5, SCAN_FIX, {**fixed, "jax/_src/linalg.py": base["jax/_src/linalg.py"] + "# branch\n"}, (1,),
                author_date=picked_at),  # the release branch's pick
        _Commit(6, "b2 Prepare release 0.1.1", {**fixed, "CHANGELOG.md": "0.1.1\n"}, (5,)),
    ]
    history = History(write_history(tmp_path / "jax", commits, {"jax-v0.1.1": 6}, {"main": 4}), "test")
    pick = _on(history, SCAN_FIX, main=False)
    twin = main_line_twin(history, pick)
    assert twin is not None
    assert twin.how == "same title, author and author date"
    assert twin.commit == _on(history, SCAN_FIX, main=True)
    assert twin.commit != pick


def test_a_branch_fix_and_its_main_line_twin_each_name_the_first_release_that_carries_them(history: History) -> None:
    # Issue 49: a user on either line needs the release that is safe there (0.4.37's branch fix, as here 0.1.1's).
    picked, twin = _on(history, FIX, main=False), _on(history, FIX, main=True)
    assert first_release(history, picked) == "0.1.1"
    assert first_release(history, twin) == "0.2.0"
    assert first_release(history, _on(history, "m4 later work", main=True)) == "0.2.0"


WHILE_FIX = "Avoid index out of range error in carry structure check"


@pytest.fixture(scope="module")
def merged_back(tmp_path_factory: pytest.TempPathFactory) -> History:
    """JAX's 0.4.37 as it happened: the fix on main (m2) and its pick on release/0.4.37 (same title, author and
    author date, another context), the release tagged there, then the branch merged back into main (m4), so main
    holds both copies; and a pull request merged into main (m5) whose commit is the main line's."""
    base = _files()
    at = 1733769868  # Mon Dec 9 2024, 10:44:28 -0800, the fix's author date
    fixed = {**base, "jax/_src/noise.py": "NOISE = 9\n"}
    commits = [
        _Commit(1, "m1 base", base, ()),
        _Commit(2, WHILE_FIX, fixed, (1,), author_date=at),
        _Commit(3, WHILE_FIX, {**fixed, "jax/_src/linalg.py": base["jax/_src/linalg.py"] + "# 0.4.37\n"}, (1,),
                author_date=at),
        _Commit(4, "Update versions for v0.4.37 release.", {**fixed, "CHANGELOG.md": "0.4.37\n"}, (3,)),
        _Commit(5, "Merge branch 'release/0.4.37' into main.", {**fixed, "CHANGELOG.md": "0.4.37\n"}, (2, 4)),
        _Commit(6, "pr: faster scan", {**fixed, "jax/_src/scan.py": "FAST = 1\n"}, (1,)),
        _Commit(7, "Merge pull request #25000 from dev:scan", {**fixed, "CHANGELOG.md": "0.4.37\n",
                                                              "jax/_src/scan.py": "FAST = 1\n"}, (5, 6)),
        _Commit(8, "m8 later", {**fixed, "CHANGELOG.md": "0.4.38\n", "jax/_src/scan.py": "FAST = 1\n"}, (7,)),
    ]
    tags = {"jax-v0.4.37": 4, "jax-v0.4.38": 8}
    return History(write_history(tmp_path_factory.mktemp("merged") / "jax", commits, tags, {"main": 8}), "test")


def _titled(history: History, title: str, in_tag: str, not_in: str | None = None) -> str:
    import subprocess

    args = ["git", "-C", str(history.path), "log", "--format=%H %s", in_tag] + ([f"^{not_in}"] if not_in else [])
    out = subprocess.run(args, capture_output=True, text=True, check=True).stdout
    return next(line.split(" ", 1)[0] for line in out.splitlines() if line.split(" ", 1)[1] == title)


def test_a_release_branch_merged_back_into_main_is_still_a_release_branch(merged_back: History) -> None:
    picked = _titled(merged_back, WHILE_FIX, "jax-v0.4.37")
    on_main = next(c for c in _all(merged_back, WHILE_FIX) if c != picked)
    tip = _titled(merged_back, "m8 later", "main")
    assert release_branch(merged_back, picked, tip) == "jax-v0.4.37"
    assert release_branch(merged_back, on_main, tip) is None
    assert release_branch(merged_back, _titled(merged_back, "pr: faster scan", "main"), tip) is None  # a PR's
    # Was None: main holds the pick since the merge, so it was taken for a main-line commit and no twin was sought.
    twin = main_line_twin(merged_back, picked)
    assert twin is not None and (twin.commit, twin.how) == (on_main, "same title, author and author date")


def test_a_main_line_fix_names_its_copy_on_a_release_branch(merged_back: History) -> None:
    picked = _titled(merged_back, WHILE_FIX, "jax-v0.4.37")
    on_main = next(c for c in _all(merged_back, WHILE_FIX) if c != picked)
    copies = branch_twins(merged_back, on_main)
    assert [(c.commit, c.how, c.branch) for c in copies] == [(picked, "same title, author and author date",
                                                              "jax-v0.4.37")]
    assert (first_release(merged_back, picked), first_release(merged_back, on_main)) == ("0.4.37", "0.4.38")
    assert branch_twins(merged_back, picked) == []  # the branch's own commit: its twin is main's (above)
    assert branch_twins(merged_back, _titled(merged_back, "m8 later", "main")) == []


def _all(history: History, title: str) -> list[str]:
    import subprocess

    out = subprocess.run(["git", "-C", str(history.path), "log", "--all", "--format=%H %s"], capture_output=True,
                         text=True, check=True).stdout
    return [line.split(" ", 1)[0] for line in out.splitlines() if line.split(" ", 1)[1] == title]


def test_the_real_while_loop_fix_and_its_twin_are_found_both_ways() -> None:
    """65b6088411 on release/0.4.37 (merged back into main) and bd77a703fd on main: same title, author and author
    date, other patch ids. Runs where KIT_JAX_REPO names a whole clone."""
    import os

    clone = os.environ.get("KIT_JAX_REPO")
    if not clone:
        pytest.skip("KIT_JAX_REPO does not name a clone of https://github.com/jax-ml/jax")
    history = History(Path(clone), "KIT_JAX_REPO")
    twin = main_line_twin(history, "65b6088411")
    assert twin is not None and twin.commit.startswith("bd77a703fd")
    assert [c.commit[:10] for c in branch_twins(history, "bd77a703fd")] == ["65b6088411"]
