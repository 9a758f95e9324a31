"""A clone's own git config runs nothing: every git call of the kit's keeps the clone's programs inert.

A ``--jax-repo`` clone is a user's data. Its ``.git/config`` once ran a command
through ``diff.<x>.textconv`` when `kit.history.leads` ran ``git log -p``. Each
program a clone's config (or attributes) can name is set here to a script that
leaves a mark; the kit's git calls (log -p, show, fetch, rev-list) must leave
none. docs/faults.md, "Untrusted input and the kit's folders".
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from kit.history.git import GitFailed, git

PROGRAMS = ("diff.evil.textconv", "diff.external", "core.fsmonitor", "core.pager", "core.hooksPath",
            "remote.origin.uploadpack", "alias.log", "alias.show")


def _plain_git(repo: Path, *args: str) -> None:
    # Hermetic: the caller's own git config (commit.gpgsign, a template's hooks) must not change the fixture.
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@t", "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, env=env)


def _marker_script(folder: Path, name: str) -> Path:
    script = folder / f"{name}.sh"
    script.write_text(f'#!/bin/sh\ntouch "{folder}/ran-{name}"\ncat "$@" 2>/dev/null\nexit 0\n')
    script.chmod(0o755)
    return script


@pytest.fixture
def hostile_clone(tmp_path: Path) -> Path:
    """A clone of a two-commit repository whose config names a marking script for every program it can."""
    origin, clone, marks = tmp_path / "origin", tmp_path / "clone", tmp_path / "marks"
    marks.mkdir()
    origin.mkdir()
    _plain_git(origin, "init", "-q")
    for text in ("one\n", "two\n"):
        (origin / "f.txt").write_text(text)
        _plain_git(origin, "add", "f.txt")
        _plain_git(origin, "commit", "-q", "-m", text.strip())
    _plain_git(tmp_path, "clone", "-q", str(origin), str(clone))
    (origin / "f.txt").write_text("three\n")
    _plain_git(origin, "commit", "-q", "-am", "three")  # something for the clone to fetch
    (clone / ".git" / "info" / "attributes").write_text("* diff=evil\n")
    hooks = marks / "hooks"
    hooks.mkdir()
    for hook in ("reference-transaction", "post-checkout", "pre-auto-gc", "post-merge"):
        _marker_script(hooks, hook)
    for key in PROGRAMS:
        value = str(hooks) if key == "core.hooksPath" else str(_marker_script(marks, key))
        _plain_git(clone, "config", key, ("!" + value) if key.startswith("alias.") else value)
    return clone


def test_the_kits_git_calls_run_none_of_a_clones_configured_programs(hostile_clone: Path) -> None:
    marks = hostile_clone.parent / "marks"
    patch = git(hostile_clone, "log", "-p", "--format=%H", "HEAD~1..HEAD", "--", "f.txt")
    git(hostile_clone, "show", "--format=", "HEAD")
    git(hostile_clone, "status", "--porcelain")  # reads the index: the fsmonitor's moment
    try:  # a configured upload-pack that ran would break the fetch: the marks below say which ran
        git(hostile_clone, "-c", "fetch.negotiationAlgorithm=noop", "fetch", "--quiet", "--no-tags", "origin")
    except GitFailed:
        pass
    assert sorted(p.name for p in marks.rglob("ran-*")) == []
    assert "+two" in patch, "the real diff, not a driver's"
    fetched = git(hostile_clone, "log", "--format=%s", "origin/HEAD").split()
    assert fetched == ["three", "two", "one"], "the fetch itself still works"
