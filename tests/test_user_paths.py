"""kit/user_paths.py: a path the user gave, said as what it is when it is not what was asked; how reports show paths.

The commands that take these paths are run in tests/faults/test_inputs.py; here each answer is reached directly.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from kit.errors import ConfigError, UsageError
from kit.user_paths import (
    FIND_LINKS_TIP,
    checked_find_links,
    file_problem,
    folder_or_nothing_yet,
    folder_problem,
    is_url,
    report_path,
    shown_path,
)

as_root = os.geteuid() == 0


def test_a_folder_and_a_file_are_what_they_are(tmp_path: Path) -> None:
    (tmp_path / "f").write_text("x")
    assert folder_problem(tmp_path) is None
    assert file_problem(tmp_path / "f") is None
    assert folder_problem(tmp_path / "f") == "is a file, not a folder"
    assert file_problem(tmp_path) == "is a folder, not a file"


def test_a_missing_path_and_a_part_that_is_a_file_are_told_apart(tmp_path: Path) -> None:
    (tmp_path / "f").write_text("x")
    assert folder_problem(tmp_path / "nope") == "does not exist"
    assert file_problem(tmp_path / "f" / "below") == "does not exist (a part of it is a file, not a folder)"


def test_links_are_followed_and_their_faults_named(tmp_path: Path) -> None:
    (tmp_path / "real").mkdir()
    (tmp_path / "good").symlink_to(tmp_path / "real")
    (tmp_path / "dangling").symlink_to(tmp_path / "gone")
    (tmp_path / "loop").symlink_to(tmp_path / "loop")
    assert folder_problem(tmp_path / "good") is None
    assert folder_problem(tmp_path / "dangling") == f"is a symbolic link to {tmp_path / 'gone'}, which does not exist"
    assert file_problem(tmp_path / "loop") == "is a symbolic link loop (it leads back to itself)"


def test_a_pipe_is_neither_a_file_nor_a_folder(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "fifo")
    assert file_problem(tmp_path / "fifo") == "is not a regular file (a pipe, a device or a socket)"
    assert folder_problem(tmp_path / "fifo") == "is not a folder (a pipe, a device or a socket)"


@pytest.mark.skipif(as_root, reason="root reads and searches whatever the mode")
def test_permissions_are_said_for_the_path_and_for_a_folder_above_it(tmp_path: Path) -> None:
    locked = tmp_path / "locked"
    locked.mkdir()
    (locked / "f").write_text("x")
    locked.chmod(0)
    try:
        assert folder_problem(locked) == "is a folder this user cannot read (permission denied)"
        assert file_problem(locked / "f") == "cannot be reached (permission denied on a folder above it)"
    finally:
        locked.chmod(0o755)


def test_nothing_there_yet_is_accepted_and_a_file_refused_with_the_given_error(tmp_path: Path) -> None:
    assert folder_or_nothing_yet(tmp_path / "later", "results_dir") == tmp_path / "later"
    (tmp_path / "taken").write_text("x")
    with pytest.raises(ConfigError) as raised:
        folder_or_nothing_yet(tmp_path / "taken", "results_dir")
    assert str(raised.value) == f"results_dir {str(tmp_path / 'taken')!r} is a file, not a folder"
    assert raised.value.tip == "name a folder (it is made when first needed)"
    with pytest.raises(UsageError):
        folder_or_nothing_yet(tmp_path / "taken", "--results", UsageError)


def test_a_dangling_link_is_not_nothing_yet(tmp_path: Path) -> None:
    # lexists, not exists: a dangling link would make "mkdir" fail later, after a check ran for nothing.
    (tmp_path / "results").symlink_to(tmp_path / "gone")
    with pytest.raises(ConfigError, match="is a symbolic link to .*gone, which does not exist"):
        folder_or_nothing_yet(tmp_path / "results", "results_dir")


@pytest.mark.parametrize("text, url", [("https://example.org/wheels/", True), ("file:///srv/wheels", True),
                                       ("http://host:8080", True), ("C:\\wheels", False), ("C:/wheels", False),
                                       ("wheels", False), ("/srv/wheels", False), ("https:wheels", False),
                                       ("./https://x", False)])
def test_is_url_tells_pages_from_paths(text: str, url: bool) -> None:
    # A drive letter is a one-letter scheme to urlsplit: it must stay a path.
    assert is_url(text) is url


def test_find_links_keep_urls_and_good_folders_in_order(tmp_path: Path) -> None:
    (tmp_path / "wheels").mkdir()
    links = ["https://example.org/w/", "wheels", str(tmp_path / "wheels")]
    assert checked_find_links(links, "--find-links", base=tmp_path) == tuple(links)


def test_a_relative_find_links_says_where_it_looked(tmp_path: Path) -> None:
    with pytest.raises(UsageError) as raised:
        checked_find_links(["https://ok/", "whels"], "--find-links", base=tmp_path)
    assert str(raised.value) == f"--find-links 'whels' does not exist (looked at {tmp_path / 'whels'})"
    assert raised.value.tip == FIND_LINKS_TIP


def test_an_absolute_find_links_is_named_as_given(tmp_path: Path) -> None:
    (tmp_path / "w.whl").write_text("x")
    with pytest.raises(ConfigError) as raised:
        checked_find_links([str(tmp_path / "w.whl")], "find_links", error=ConfigError)
    assert str(raised.value) == f"find_links {str(tmp_path / 'w.whl')!r} is a file, not a folder"


def test_shown_path_prefers_the_project_over_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # A project inside the home folder: its files are named from the project, not as ~/project/...
    monkeypatch.setenv("HOME", str(tmp_path))
    project = tmp_path / "project"
    assert shown_path(project / "reports" / "m.md", project) == "reports/m.md"
    assert shown_path(tmp_path / "other" / "x.py", project) == "~/other/x.py"


def test_shown_path_resolves_a_project_reached_through_a_link(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    (tmp_path / "real").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "real")
    assert shown_path(tmp_path / "real" / "a.py", tmp_path / "link") == "a.py"


def test_shown_path_takes_relative_paths_from_the_working_folder(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.chdir(tmp_path)
    assert shown_path("sub/../x.py", tmp_path) == "x.py"  # made absolute (normalised), then relative
    assert shown_path("/opt/else/x.py", tmp_path / "p") == "/opt/else/x.py"


def test_report_path_names_a_path_outside_project_and_home_relative_to_the_project(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A report is pasted where this machine means nothing: no absolute path, still usable from the project."""
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    project = tmp_path / "work" / "project"
    assert report_path(tmp_path / "work" / "jax", project) == "../jax"
    assert report_path(project / "checks" / "a.py", project) == "checks/a.py"
    assert report_path(tmp_path / "home" / "src" / "jax", project) == "~/src/jax"

