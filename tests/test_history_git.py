"""kit.history.git: one way to run git, and telling an unreachable remote from other failures."""

from __future__ import annotations

from pathlib import Path

import pytest

from kit.history.git import GitFailed, git, looks_like_network


@pytest.mark.parametrize(("stderr", "network"), [
    ("fatal: unable to access 'https://github.com/jax-ml/jax.git/': Could not resolve host: github.com", True),
    ("fatal: unable to access 'https://127.0.0.1:9/x.git/': Failed to connect to 127.0.0.1 port 9", True),
    ("fatal: couldn't find remote ref refs/tags/jax-v9.9.9", False),
    ("fatal: not a git repository (or any of the parent directories): .git", False),
])
def test_network_failures_are_told_apart(stderr: str, network: bool) -> None:
    assert looks_like_network(GitFailed(["fetch"], stderr)) is network


def test_failure_carries_gits_last_line(tmp_path: Path) -> None:
    with pytest.raises(GitFailed) as error:
        git(tmp_path, "rev-parse", "--verify", "HEAD")
    assert "not a git repository" in error.value.last


def _repo(folder: Path, title: str) -> Path:
    folder.mkdir()
    for args in (["init", "-q"], ["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "--allow-empty",
                                  "-m", title]):
        git(folder, *args)
    return folder


def test_the_repository_is_the_one_named_not_one_a_git_hook_exported(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    asked, other = _repo(tmp_path / "jax", "jax's commit"), _repo(tmp_path / "project", "the project's commit")
    # What a hook run by `git commit` (pre-commit, say) has exported when it starts the kit.
    monkeypatch.setenv("GIT_DIR", str(other / ".git"))
    monkeypatch.setenv("GIT_WORK_TREE", str(other))
    monkeypatch.setenv("GIT_INDEX_FILE", str(other / ".git" / "index"))
    assert git(asked, "log", "-1", "--format=%s").strip() == "jax's commit"
    assert git(asked, "rev-parse", "--show-toplevel").strip() == str(asked.resolve())
