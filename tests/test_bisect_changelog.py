"""Tests for kit.bisect.report.changelog: heading formats of every era, links, the offline fallback."""

from __future__ import annotations

from pathlib import Path
from typing import List

import pytest

from kit.bisect.report.changelog import (
    fetch_changelog,
    release_notes,
    ReleaseSection,
    changelog_url,
    compare_url,
    parse_changelog,
    select_sections,
)

ALL_ERAS = Path(__file__).parent / "fixtures" / "changelog" / "all-eras-excerpt.md"


@pytest.fixture
def sections() -> List[ReleaseSection]:
    return parse_changelog(ALL_ERAS.read_text(encoding="utf-8"))


def test_every_release_heading_is_found_in_order(sections: List[ReleaseSection]) -> None:
    assert [(s.package, s.version, s.date) for s in sections] == [
        ("jax", "0.6.0", "April 16, 2025"),
        ("jax", "0.5.3", "Mar 19, 2025"),
        ("jax", "0.4.36", "Dec 5, 2024"),
        ("jax", "0.4.32", "September 11, 2024"),
        ("jaxlib", "0.4.32", "September 11, 2024"),
        ("jax", "0.4.21", "Dec 4 2023"),
        ("jaxlib", "0.1.58", "January 12ish 2021"),
        ("jax", "0.3.16", None),
        ("jax", "0.2.0", "September 23 2020"),
    ]


def test_unreleased_and_preamble_are_not_releases(sections: List[ReleaseSection]) -> None:
    text = "\n".join(s.markdown for s in sections)
    assert "not yet released" not in text
    assert "Best viewed" not in text


def test_section_keeps_subheadings_and_code_but_stops_at_next_release(sections: List[ReleaseSection]) -> None:
    body = next(s.markdown for s in sections if s.version == "0.4.36")
    assert body.startswith("## jax 0.4.36 (Dec 5, 2024)\n")
    assert "## this line is code, not a heading" in body
    assert "### Notable bug fixes" in body
    assert "0.4.32" not in body
    assert not body.endswith("\n")


def test_myst_roles_become_github_markdown(sections: List[ReleaseSection]) -> None:
    by_version = {s.version: s.markdown for s in sections if s.package == "jax"}
    assert "`jax.numpy.clip` no longer accepts `a_min` (#20550)" in by_version["0.6.0"]
    assert "`jax.lax.linalg.lu` batched over many matrices (#12041)" in by_version["0.4.36"]
    assert "See the sharding guide." in by_version["0.4.36"]
    assert "{" not in by_version["0.5.3"]


def test_tag_checkout_heading_without_date() -> None:
    """At a release's own tag its heading has no date yet: ``## jax 0.4.36``."""
    text = "# Change log\n\n## jax 0.4.36\n\n* Changes\n\n## jax 0.4.35 (Oct 22, 2024)\n\n* Older\n"
    (first, second) = parse_changelog(text)
    assert (first.version, first.date, first.markdown) == ("0.4.36", None, "## jax 0.4.36\n\n* Changes")
    assert (second.version, second.date) == ("0.4.35", "Oct 22, 2024")


def test_select_joins_jax_and_jaxlib_and_flags_missing(sections: List[ReleaseSection]) -> None:
    chosen = select_sections(sections, ["0.4.32", "0.9.0.1"])
    assert list(chosen) == ["0.4.32", "0.9.0.1"]
    assert chosen["0.4.32"].index("## jax 0.4.32") < chosen["0.4.32"].index("## jaxlib 0.4.32")
    assert "not available" in chosen["0.9.0.1"]
    assert changelog_url("0.9.0.1") in chosen["0.9.0.1"]


def test_links_use_jax_v_tags() -> None:
    assert compare_url("0.4.35", "0.4.36") == "https://github.com/jax-ml/jax/compare/jax-v0.4.35...jax-v0.4.36"
    assert changelog_url("0.4.36") == "https://github.com/jax-ml/jax/blob/jax-v0.4.36/CHANGELOG.md"


# --------------------------------------------------------------------------
# Fetching and quoting (kit.bisect.report.changelog.release_notes)

SAVED = "# Changelog\n\n## jax 0.5.3 (March 19, 2025)\n\n* Fixed sharding of batched LU.\n\n## jax 0.5.2\n\n* older\n"


def test_reachable_changelog_is_kept_and_quoted(tmp_path: Path) -> None:
    upstream = tmp_path / "upstream.md"
    upstream.write_text(SAVED)
    lines = release_notes(["0.5.3"], tmp_path / "cache", url=upstream.as_uri())
    assert "* Fixed sharding of batched LU." in "\n".join(lines)
    assert "* older" not in "\n".join(lines)
    assert (tmp_path / "cache" / "CHANGELOG.md").read_text() == SAVED  # a copy is kept
    upstream.unlink()
    assert "Fixed sharding" in "\n".join(release_notes(["0.5.3"], tmp_path / "cache", url=upstream.as_uri()))


def test_unreachable_changelog_is_one_line_of_links(tmp_path: Path) -> None:
    missing = (tmp_path / "nowhere.md").as_uri()
    lines = release_notes(["0.5.1", "0.5.2", "0.5.3"], tmp_path / "cache", url=missing)
    assert len(lines) == 1
    assert "[jax 0.5.2](https://github.com/jax-ml/jax/blob/jax-v0.5.2/CHANGELOG.md)" in lines[0]
    assert "could not be reached" in lines[0]
    # Remembered for an hour: the next report does not wait on the network again.
    assert fetch_changelog(tmp_path / "cache", url="http://127.0.0.1:9/never")[1] == fetch_changelog(
        tmp_path / "cache", url=missing)[1]


def test_a_saved_copy_given_explicitly_wins(tmp_path: Path) -> None:
    saved = tmp_path / "mine.md"
    saved.write_text(SAVED)
    lines = release_notes(["0.5.3"], tmp_path / "cache", saved, url=(tmp_path / "nowhere.md").as_uri())
    assert lines[0].startswith("## jax 0.5.3")
