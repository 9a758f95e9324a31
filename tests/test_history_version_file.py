"""kit.history.version_file: the jaxlib range each commit's jax/version.py accepts."""

from __future__ import annotations

from pathlib import Path

import pytest

from fake_jax import BUMP_TITLE, UNRUNNABLE_TITLE, commit_titled, make_repo
from kit.history.source import History
from kit.history.version_file import JaxlibRange, dotted, jaxlib_ranges, parse_version_file


@pytest.mark.parametrize(("text", "expected"), [
    ('_version = "0.5.2"\n_release_version: str | None = None\n_minimum_jaxlib_version = "0.5.1"\n',
     JaxlibRange("0.5.1", "0.5.2")),
    ("_version = '0.8.0'\n_minimum_jaxlib_version = '0.8.0'\n", JaxlibRange("0.8.0", "0.8.0")),  # jax 0.8 quotes
    ('__version__ = "0.4.13"\n_minimum_jaxlib_version = "0.4.11"\n', JaxlibRange("0.4.11", "0.4.13")),  # before 0.4.14
    ('_version: str = "0.6.0"\n_minimum_jaxlib_version = "0.6.0"\n', JaxlibRange("0.6.0", "0.6.0")),
    ("print('not jax')\n", None),
])
def test_parse_version_file(text: str, expected: JaxlibRange | None) -> None:
    assert parse_version_file(text) == expected


@pytest.mark.parametrize(("jaxlib", "accepted"), [("0.5.0", False), ("0.5.1", True), ("0.5.2", True),
                                                  ("0.5.2.dev20250227", True), ("0.5.3", False)])
def test_accepts_as_jax_compares_the_dotted_prefix(jaxlib: str, accepted: bool) -> None:
    assert JaxlibRange("0.5.1", "0.5.2.dev20250227+abc").accepts(jaxlib) is accepted
    assert dotted("0.5.2.dev20250227+abc") == (0, 5, 2)


def test_ranges_read_once_per_distinct_file(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "jax")
    history = History(repo, "test")
    commits = [commit_titled(repo, t) for t in ("JAX release v0.1.0", UNRUNNABLE_TITLE, BUMP_TITLE,
                                                "JAX release v0.2.0")]
    ranges = jaxlib_ranges(history, [*commits, "0" * 40])
    assert [ranges[c] for c in commits] == [JaxlibRange("0.1.0", "0.1.0"), JaxlibRange("0.1.5", "0.1.0"),
                                            JaxlibRange("0.1.0", "0.2.0"), JaxlibRange("0.2.0", "0.2.0")]
    assert ranges["0" * 40] is None  # a commit the clone lacks: no range, not an error
