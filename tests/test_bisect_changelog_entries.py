"""kit.bisect.report.changelog_entries, and release notes read from a clone without --commits."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Callable

import pytest

from kit.bisect.report import changelog
from kit.bisect import driver
from kit.bisect.report.changelog import release_notes
from kit.bisect.report.changelog_entries import entries, error_terms, matching, quoted, script_terms
from tests.fake_releases import FakeReleases
from tests.bisect_machine import CHECKS, RELEASES, verdicts

SECTION = """\
## jax 0.5.3 (March 19, 2025)

* New Features

  * Added a `replace` option to `jax.random.categorical`.
  * Added `jax.numpy.linalg.slogdet` batching over sharded
    batch dimensions ({jax-issue}`#24843`).

* Bug fixes

  * Fixed a crash with `XlaRuntimeError` on empty shapes.
  * Fixed a typo.
"""


def test_entries_are_the_leaf_bullets_with_their_group_and_continuation_lines() -> None:
    found = entries(SECTION)
    assert [e.group for e in found] == ["New Features", "New Features", "Bug fixes", "Bug fixes"]
    assert found[1].lines == ("  * Added `jax.numpy.linalg.slogdet` batching over sharded",
                              "    batch dimensions ({jax-issue}`#24843`).")


def test_terms_are_what_the_script_calls_imports_and_cites_not_what_every_script_calls() -> None:
    script = ("import jax, jax.numpy as jnp\nfrom jax.experimental.shard_map import shard_map\n"
              "x = jnp.ones((4, 3, 3))\nprint(jax.jit(jnp.linalg.slogdet)(x))\nlu = jax.scipy.linalg.lu(x)\n"
              "# see https://github.com/jax-ml/jax/issues/24843 and #21403\n")
    assert script_terms(script) == ["shard_map", "slogdet", "#21403", "#24843"]


def test_error_terms_keep_jax_own_classes_and_quoted_names_not_builtins() -> None:
    assert error_terms("jaxlib.xla_extension.XlaRuntimeError: INTERNAL: boom") == ["XlaRuntimeError"]
    assert error_terms("TypeError: jit() got multiple values for argument 'static_argnames'") == ["static_argnames"]
    assert error_terms(None) == []


def test_only_matching_entries_are_quoted_whole_words_and_issue_numbers() -> None:
    assert [e.lines[0].strip() for e in matching(SECTION, ["#24843"])] == [
        "* Added `jax.numpy.linalg.slogdet` batching over sharded"]
    assert matching(SECTION, ["slog"]) == []  # a whole word, not a piece of one
    lines = quoted("## jax 0.5.3 (March 19, 2025)", SECTION, ["slogdet", "XlaRuntimeError"], "LINK")
    text = "\n".join(lines)
    assert "* New Features" in text
    assert "* Bug fixes" in text
    assert "categorical" not in text
    assert "typo" not in text
    assert lines[-1] == "_2 of 4 entries mention `slogdet`, `XlaRuntimeError`; the whole section: LINK_"


def test_release_notes_with_terms_quote_entries_and_without_them_whole_sections(tmp_path: Path) -> None:
    text = "# Changelog\n\n" + SECTION
    assert "typo" in "\n".join(release_notes(["0.5.3"], tmp_path, text=text))
    picked = "\n".join(release_notes(["0.5.3"], tmp_path, text=text, looking_for=["slogdet"]))
    assert "slogdet" in picked
    assert "typo" not in picked
    assert "https://github.com/jax-ml/jax/blob/jax-v0.5.3/CHANGELOG.md" in picked


def git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True)


@pytest.fixture
def clone(tmp_path: Path) -> Path:
    """A JAX-shaped clone: CHANGELOG.md at a jax-v0.5.3 tag."""
    repo = tmp_path / "jax"
    repo.mkdir()
    git(repo, "init", "-q")
    (repo / "CHANGELOG.md").write_text("# Changelog\n\n" + SECTION.replace(
        "* Fixed a typo.", "* Fixed `slogdet` when batched.\n  * Fixed a typo."))
    git(repo, "add", "CHANGELOG.md")
    git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "release")
    git(repo, "tag", "jax-v0.5.3")
    return repo


def test_jax_repo_without_commits_gives_the_notes_from_the_clone_and_no_network(
        fake_releases: Callable[..., FakeReleases], monkeypatch: pytest.MonkeyPatch, clone: Path) -> None:
    def no_network(*args: object, **kwargs: object) -> None:
        raise AssertionError("the release notes were fetched although the clone has them")

    monkeypatch.setattr(changelog, "fetch_changelog", no_network)
    releases = fake_releases(RELEASES, matrix_releases=["0.4.35", "0.6.0"], checks=CHECKS)
    for version, verdict in verdicts("0.5.3", fix=True).items():
        releases.behave(version, verdict)
    argv = ["--check", "scaling", "--good", "0.6.0", "--bad", "0.4.35", "--jax-repo", str(clone)]
    assert driver.main(releases.matrix, argv, lambda _line: None) == 0
    markdown = next(releases.matrix.results_dir.parent.glob("bisect-*.md")).read_text()
    notes = markdown.split("<summary>Release notes</summary>", 1)[1].split("</details>", 1)[0]
    assert "Fixed `slogdet` when batched." in notes
    assert "slogdet` batching" in notes  # the check's repro calls it
    assert "typo" not in notes
    assert "categorical" not in notes
    # The clone is named only where the command is quoted, as given, so the pasted line runs (issue 58).
    assert [line for line in markdown.splitlines() if str(clone) in line and f"--jax-repo {clone}" not in line] == []


def test_a_tag_whose_own_section_is_still_unreleased_is_quoted_as_that_release() -> None:
    from kit.bisect.report.changelog import parse_changelog
    from kit.bisect.report.inputs import unreleased_as

    at_tag = "# Changelog\n\n## Unreleased\n\n* Bug fixes\n  * `jnp.foo` fixed.\n\n## JAX 0.7.1 (August 20, 2025)\n\n* x\n"
    sections = parse_changelog(unreleased_as(at_tag, "0.7.2") or "")
    assert [(s.version, s.markdown.splitlines()[0]) for s in sections] == [("0.7.2", "## jax 0.7.2"),
                                                                            ("0.7.1", "## JAX 0.7.1 (August 20, 2025)")]
    named = "## jax 0.7.2\n\n* a\n\n## Unreleased\n"
    assert unreleased_as(named, "0.7.2") == named  # a release with its own section keeps it


def test_at_most_twelve_lines_of_a_release_are_quoted() -> None:
    from kit.bisect.report.changelog_entries import MAX_LINES, first_lines, quoted

    section = "## jax 0.5.0\n\n" + "\n".join(f"* `slogdet` change {n}" for n in range(40))
    lines = quoted("## jax 0.5.0", section, ["slogdet"], "LINK")
    assert sum(line.startswith("* ") for line in lines) == MAX_LINES == 12
    assert lines[-1] == "_40 of 40 entries mention `slogdet` (the first 12 lines); the whole section: LINK_"
    whole = first_lines(section, "LINK")
    assert len(whole) == 1 + MAX_LINES + 2
    assert whole[-1] == "_29 more lines: LINK_"
