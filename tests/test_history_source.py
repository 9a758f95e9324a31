"""kit.history.source: a clone the user names, or the kit's own partial clone from a (file://) remote."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from fake_jax import make_repo
from kit.errors import HistoryUnreachable, UsageError
from kit.history.source import ensure_tags, has_tag, open_history

UNREACHABLE = "https://127.0.0.1:9/jax-ml/jax.git"  # a port nothing listens on: refused at once


@pytest.fixture(scope="module")
def upstream(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_repo(tmp_path_factory.mktemp("upstream") / "jax")


def test_a_given_clone_is_read_where_it_is(upstream: Path, tmp_path: Path) -> None:
    history = open_history(upstream, "--jax-repo", tmp_path / "cache", print)
    assert history.path == upstream.resolve()
    assert history.remote is None
    assert "--jax-repo" in history.origin
    assert not (tmp_path / "cache").exists()


@pytest.mark.parametrize(("make", "message"), [(lambda p: p / "missing", "does not exist"),
                                               (lambda p: p, "is not a git clone")])
def test_a_given_path_that_is_no_clone_is_one_sentence(tmp_path: Path, make: object, message: str) -> None:
    with pytest.raises(UsageError, match=message) as error:
        open_history(make(tmp_path), "--jax-repo", tmp_path / "cache", print)  # type: ignore[operator]
    assert "--jax-repo" in error.value.message


def test_a_git_repository_that_is_not_jax_is_refused_before_any_probe(tmp_path: Path) -> None:
    other = tmp_path / "other"
    subprocess.run(["git", "init", "-q", str(other)], check=True)
    with pytest.raises(UsageError, match="has no jax-vX.Y.Z tag") as error:
        open_history(other, "--jax-repo", tmp_path / "cache", print)
    assert "fetch --tags" in (error.value.tip or "")


def test_the_kits_clone_is_partial_and_made_once(upstream: Path, tmp_path: Path) -> None:
    lines: list[str] = []
    cache = tmp_path / ".nox" / "jax-history" / "jax.git"
    history = open_history(None, "", cache, lines.append, remote=upstream.as_uri())
    assert history.path == cache
    assert history.remote == upstream.as_uri()
    assert len(lines) == 1
    assert subprocess.run(["git", "-C", str(cache), "config", "remote.origin.promisor"], capture_output=True,
                          text=True).stdout.strip() == "true"
    assert has_tag(history, "jax-v0.2.0")
    open_history(None, "", cache, lines.append, remote=upstream.as_uri())
    assert len(lines) == 1  # the second time, nothing is cloned


def test_no_clone_and_unreachable_remote_is_exit_4_naming_jax_repo(tmp_path: Path) -> None:
    with pytest.raises(HistoryUnreachable) as error:
        open_history(None, "", tmp_path / "jax.git", print, remote=UNREACHABLE)
    assert error.value.exit_code == 4
    assert "pass --jax-repo PATH" in error.value.message
    assert not (tmp_path / "jax.git").exists()
    assert not list(tmp_path.iterdir())  # nothing half-made is left


def test_missing_tags_are_fetched_into_the_kits_clone_only(upstream: Path, tmp_path: Path) -> None:
    cache = tmp_path / "jax.git"
    history = open_history(None, "", cache, print, remote=upstream.as_uri())
    subprocess.run(["git", "-C", str(cache), "tag", "-d", "jax-v0.2.0"], check=True, capture_output=True)
    lines: list[str] = []
    ensure_tags(history, ["jax-v0.1.0", "jax-v0.2.0"], lines.append)
    assert has_tag(history, "jax-v0.2.0")
    assert any("fetching jax-v0.2.0" in line for line in lines)
    with pytest.raises(UsageError, match="has no tag jax-v9.9.9"):
        ensure_tags(history, ["jax-v9.9.9"], print)
    users = open_history(upstream, "--jax-repo", tmp_path / "unused", print)
    with pytest.raises(UsageError, match="has no tag jax-v9.9.9") as error:
        ensure_tags(users, ["jax-v9.9.9"], print)
    assert "fetch --tags" in error.value.tip  # a user's clone is never written to: they are told how
