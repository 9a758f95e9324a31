"""JAX release notes and compare links for bisect reports.

A bisect report ends with the range found, a compare link and "the changelog
sections of the releases in between", ready to paste into an issue.

Where the changelog can come from (checked November 2026):

* JAX's ``CHANGELOG.md`` lives in the GitHub repository only. The jax sdists
  on PyPI do **not** ship it (checked 0.4.13, 0.4.36, 0.5.0, 0.9.2 and
  0.12.0.1: they hold ``README.md`` and the package, nothing else; PKG-INFO
  only links to https://docs.jax.dev/en/latest/changelog.html), and wheels
  never did. jaxlib has no sdist.
* :func:`release_notes` therefore fetches it from the repository
  (:data:`RAW_CHANGELOG_URL`) when that can be reached, keeps a copy at
  ``<cache_dir>/CHANGELOG.md`` (refreshed daily) and quotes the sections of
  the releases asked for. Where the repository cannot be reached (on the
  machine this kit is developed on only package registries can) it uses the
  copy it has, a file passed with ``--changelog``, or else says so in ONE
  line with a link per release.

Heading formats seen across eras (all level-2 headings, newest first)::

    ## Unreleased                      (HEAD, since 0.6)
    ## JAX 0.6.0 (April 16, 2025)      (upper case since 0.6.0)
    ## jax 0.4.36 (Dec 5, 2024)        (month abbreviated or not, comma or not)
    ## jax 0.4.36                      (the release's own tag: no date yet)
    ## jaxlib 0.4.32 (September 11, 2024)  (separate jaxlib notes up to 0.4.32)
    ## jaxlib 0.1.58 (January 12ish 2021)
    ## jax 0.3.16                      (some old releases have no date)
    ## jax (0.2.0) (September 23 2020)

Tags are ``jax-v<version>`` (``jax-v0.4.35``) for every release since 0.2.0;
the changelog itself links ``compare/jax-v0.1.77...jax-v0.2.0``. Separate
``jaxlib-v`` tags stop at 0.4.32, so compare links always use ``jax-v``.

Parsing (:func:`parse_changelog`, :func:`select_sections`) is pure; only
:func:`fetch_changelog` touches the file system and the network.
"""

from __future__ import annotations

import re
import time
import urllib.parse
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, Iterable, List, Optional, Sequence

from ... import http
from . import changelog_entries
from ...atomic_files import atomic_write_text
from ...history.commit_range import tag
from ...history.commits import JAX_WEB

__all__ = [
    "DOCS_CHANGELOG_URL",
    "JAX_REPOSITORY",
    "ReleaseSection",
    "changelog_url",
    "compare_url",
    "not_available_text",
    "parse_changelog",
    "fetch_changelog",
    "release_notes",
    "select_sections",
    "tag",
]

JAX_REPOSITORY = JAX_WEB  # the one address, kept in kit.history
DOCS_CHANGELOG_URL = "https://docs.jax.dev/en/latest/changelog.html"
CHANGELOG_NAME = "CHANGELOG.md"
RAW_CHANGELOG_URL = "https://raw.githubusercontent.com/jax-ml/jax/main/CHANGELOG.md"
_REFRESH_S = 24 * 3600  # a kept copy is fresh for a day (new releases add sections)
_RETRY_S = 3600  # an unreachable repository is not asked again for an hour

_HEADING = re.compile(
    r"""^\#\#[ \t]+
        (?P<package>jaxlib|jax)[ \t]+
        \(?v?(?P<version>\d+(?:\.\d+)+)\)?      # 0.4.36, or (0.2.0) in 2020
        (?:[ \t]*\((?P<date>[^)]*)\))?           # optional: (Dec 5, 2024)
        [ \t]*$""",
    re.IGNORECASE | re.VERBOSE,
)
_ANY_TOP_HEADING = re.compile(r"^#{1,2}[ \t]")
_FENCE = re.compile(r"^[ \t]*(```|~~~)")

# MyST roles render as literal braces on GitHub; rewrite them for an issue.
_ISSUE_ROLE = re.compile(r"\{jax-issue\}`#?(\d+)`")
_TITLED_ROLE = re.compile(r"\{(?:py:)?[a-z]+\}`([^`<]+?)\s*<[^`>]*>`")
_PLAIN_ROLE = re.compile(r"\{(?:py:)?[a-z]+\}`~?([^`]+)`")


@dataclass(frozen=True)
class ReleaseSection:
    """One ``## jax X`` or ``## jaxlib X`` section of CHANGELOG.md."""

    package: str
    """``"jax"`` or ``"jaxlib"`` (lower case, whatever the heading said)."""
    version: str
    date: Optional[str]
    """As written (``"Dec 5, 2024"``); None for an unreleased or undated heading."""
    markdown: str
    """Heading and body, trailing blank lines removed."""


def compare_url(good: str, bad: str) -> str:
    """GitHub's commit comparison between two releases, oldest first."""
    return f"{JAX_REPOSITORY}/compare/{tag(good)}...{tag(bad)}"


def changelog_url(version: str) -> str:
    """CHANGELOG.md as it stood at a release: readable when the text is not at hand."""
    return f"{JAX_REPOSITORY}/blob/{tag(version)}/{CHANGELOG_NAME}"


def _demyst(markdown: str) -> str:
    """Turn Sphinx/MyST roles into plain GitHub markdown (``{func}`jax.jit``` → ```jax.jit```)."""
    markdown = _ISSUE_ROLE.sub(r"#\1", markdown)
    markdown = _TITLED_ROLE.sub(r"\1", markdown)
    return _PLAIN_ROLE.sub(r"`\1`", markdown)


def parse_changelog(text: str) -> List[ReleaseSection]:
    """Split JAX's CHANGELOG.md into release sections, in file order (newest first).

    A section runs from its ``## jax[lib] X`` heading to the next level-1 or
    level-2 heading, ignoring lines inside fenced code blocks (some notes show
    code). ``## Unreleased`` and the preamble are not releases and are dropped.
    """
    sections: List[ReleaseSection] = []
    current: Optional[re.Match[str]] = None
    body: List[str] = []
    in_fence = False

    def close() -> None:
        if current is not None:
            date = (current.group("date") or "").strip() or None
            text = "\n".join(body).rstrip()
            sections.append(
                ReleaseSection(current.group("package").lower(), current.group("version"), date, _demyst(text))
            )

    for line in text.splitlines():
        if _FENCE.match(line):
            in_fence = not in_fence
        elif not in_fence and _ANY_TOP_HEADING.match(line):
            close()
            current, body = _HEADING.match(line.rstrip()), []
        if current is not None:
            body.append(line)
    close()
    return sections


def not_available_text(version: str, why: str) -> str:
    """What the report shows instead of a release's notes, with where to read them."""
    return (
        f"_Release notes for jax {version} are not available here: {why}. "
        f"Read them at {changelog_url(version)} or {DOCS_CHANGELOG_URL}._"
    )


def select_sections(sections: Iterable[ReleaseSection], versions: Sequence[str]) -> Dict[str, str]:
    """Markdown per requested version: the jax notes, then the jaxlib notes if separate.

    Every requested version gets an entry; one the changelog lacks (a
    post-release such as 0.9.0.1, or a release newer than the file) gets
    :func:`not_available_text`.
    """
    by_version: Dict[str, List[ReleaseSection]] = {}
    for section in sections:
        by_version.setdefault(section.version, []).append(section)
    result: Dict[str, str] = {}
    for version in versions:
        found = sorted(by_version.get(version, []), key=lambda s: s.package != "jax")
        if found:
            result[version] = "\n\n".join(s.markdown for s in found)
        else:
            result[version] = not_available_text(version, "the changelog at hand has no section for it")
    return result


def fetch_changelog(cache_dir: Path, url: str = RAW_CHANGELOG_URL, timeout_s: float = 5.0) -> tuple[Optional[Path], str]:
    """(the kept copy, why it could not be refreshed): fetched from ``url`` when the copy is a day old.

    A failure is remembered for an hour, so a machine that cannot reach the
    repository does not wait on it in every report. The copy is returned
    even when stale; None only when there never was one.
    """
    copy = cache_dir / CHANGELOG_NAME
    marker = cache_dir / f"{CHANGELOG_NAME}.unreachable"
    if copy.is_file() and time.time() - copy.stat().st_mtime < _REFRESH_S:
        return copy, ""
    if marker.is_file() and time.time() - marker.stat().st_mtime < _RETRY_S:
        return (copy if copy.is_file() else None), marker.read_text(encoding="utf-8").strip()
    try:
        text = http.get(url, timeout=timeout_s).body.decode("utf-8")
    except (http.Unreachable, http.HttpError, UnicodeDecodeError) as exc:
        why = _why_not(url, exc)
        atomic_write_text(marker, why + "\n")
        return (copy if copy.is_file() else None), why
    atomic_write_text(copy, text)
    marker.unlink(missing_ok=True)
    return copy, ""


def _why_not(url: str, exc: Exception) -> str:
    """Why the changelog could not be fetched, naming the host only (the report shows the links)."""
    where = urllib.parse.urlsplit(url).netloc or url
    if isinstance(exc, http.Unreachable):
        return f"{where} could not be reached ({exc.reason})"
    if isinstance(exc, http.HttpError):
        return f"{where} answered HTTP {exc.status} ({exc.reason})"
    return f"{where} did not send UTF-8 text"


def release_notes(versions: Sequence[str], cache_dir: Path, changelog: Optional[Path] = None,
                  url: str = RAW_CHANGELOG_URL, text: Optional[str] = None,
                  looking_for: Sequence[str] = ()) -> List[str]:
    """Markdown lines for a report: the quoted sections, or one line of links when there is no text.

    ``text`` is CHANGELOG.md already at hand (a JAX clone's, at a release tag): nothing is fetched then.
    ``looking_for``: terms (what the script calls, its error, an issue number); each release then gets only
    the entries that mention one (`kit.bisect.report.changelog_entries`), with a link to its whole section.
    """
    if not versions:
        return ["(none: no release between the two sides)"]
    if text is not None:
        path, why = None, ""
    else:
        path, why = (changelog, "") if changelog is not None and changelog.is_file() else fetch_changelog(cache_dir, url)
    if path is not None:
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as error:
            why = f"{path} could not be read ({error})"
    if text is None:
        links = ", ".join(f"[jax {v}]({changelog_url(v)})" for v in versions)
        return [f"Release notes not quoted ({why}; pass --changelog FILE to quote a saved copy): {links}; "
                f"all releases: {DOCS_CHANGELOG_URL}"]
    lines: List[str] = []
    for version, markdown in select_sections(parse_changelog(text), versions).items():
        if looking_for and not markdown.startswith("_"):  # a section (not the sentence saying there is none)
            heading = markdown.splitlines()[0]
            lines += [*changelog_entries.quoted(heading, markdown, looking_for, changelog_url(version)), ""]
        elif not markdown.startswith("_"):
            lines += [*changelog_entries.first_lines(markdown, changelog_url(version)), ""]
        else:
            lines += [markdown, ""]
    return lines[:-1]
