"""kit.reproduce_line: a line to paste, quoted, each path as the reader can use it."""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest

from kit.reproduce_line import reproduce_argv, reproduce_command, reproduce_text, shell_join


def test_each_path_is_relative_in_the_project_home_relative_under_home_else_a_placeholder(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home, project, elsewhere = tmp_path / "home", tmp_path / "home" / "project", tmp_path / "mirror" / "jax"
    for folder in (project / "checks", elsewhere):
        folder.mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    argv = ["--script", str(project / "checks" / "c.py"), f"--jax-repo={elsewhere}", "--changelog", str(home / "n.md"),
            "--out", "../given/relative", "--bad-if", "/not/a/path/", str(elsewhere)]
    assert reproduce_argv(argv, project) == [
        "--script", "checks/c.py", f"--jax-repo={elsewhere}",  # a clone: as given, so --commits runs (issue 58)
        "--changelog", "~/n.md",
        "--out", "../given/relative",  # as the user gave it
        "--bad-if", "/not/a/path/",  # a regex, not a path of this machine's: as written
        "<PATH>"]  # a path of this machine's with no option to name it


def test_a_line_pastes_as_the_same_words_and_home_stays_expandable() -> None:
    words = ["--", "$(touch pwned)", "a`b`", "it's", "~/jax", "~"]
    line = shell_join(words)
    assert line == "-- '$(touch pwned)' 'a`b`' 'it'\"'\"'s' ~/jax '~'"
    assert shlex.split(line) == words  # as the shell splits it (it then expands ~/jax to the reader's own)


def test_a_whole_line_given_as_text_is_split_and_joined_again(tmp_path: Path) -> None:
    assert reproduce_text("nox -s explain -- train.py --lr '1e-3 x'", tmp_path) == "nox -s explain -- train.py --lr '1e-3 x'"
    assert reproduce_text("jax-kit explain 'unbalanced", tmp_path) == "'jax-kit explain '\"'\"'unbalanced'"
    assert reproduce_command("python -m kit explain", ["p.py", "$(x)"], tmp_path) == "python -m kit explain p.py '$(x)'"
