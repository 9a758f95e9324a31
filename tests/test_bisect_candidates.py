"""kit.bisect.candidates: the candidate list from index metadata, with nothing resolved."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from kit.install import release
from kit.bisect.candidates import candidate_for, list_candidates, release_versions
from kit.errors import UsageError
from kit.install.key import InstallKey
from tests.metadata_index import JAX_METADATA, MetadataIndex, candidates_matrix


@pytest.fixture
def matrix() -> Any:
    return candidates_matrix()


@pytest.fixture(autouse=True)
def only_python_312_installed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(release, "available_pythons", lambda wanted: [p for p in wanted if p == "3.12"])


def test_yanked_releases_are_listed() -> None:
    index: Any = MetadataIndex()
    assert release_versions(index, "0.4.38", "0.4.31") == ["0.4.31", "0.4.32", "0.4.34", "0.4.37", "0.4.38"]
    with pytest.raises(UsageError, match="0.4.35 is not a jax release"):
        release_versions(index, "0.4.35", "0.4.31")


def test_candidates_name_python_jaxlib_and_why_not(matrix: Any) -> None:
    index: Any = MetadataIndex()
    listed = {c.version: c for c in list_candidates(matrix, list(JAX_METADATA), InstallKey("cpu"), index)}
    assert (listed["0.4.31"].python, listed["0.4.31"].jaxlib, listed["0.4.31"].problem) == ("3.12", "0.4.31", "")
    assert listed["0.4.31"].uploaded == "2024-12-01"
    assert listed["0.4.31"].yanked is None
    assert listed["0.4.32"].yanked == "broken wheel"
    assert "has no jaxlib 0.4.32 wheels (tried Python 3.12)" in listed["0.4.32"].problem
    assert listed["0.4.37"].jaxlib == "0.4.36"
    assert listed["0.4.37"].python == "3.12"
    assert "no jaxlib 0.4.38 wheels for Python 3.12 on this platform" in listed["0.4.38"].problem
    assert (listed["0.5.2"].jaxlib, listed["0.5.2"].python) == ("0.5.1", "3.12")
    # A Python the plan allows but this machine lacks: uv may supply it when probed, so no verdict yet.
    assert (listed["0.4.34"].jaxlib, listed["0.4.34"].python, listed["0.4.34"].problem) == ("0.4.34", None, "")
    assert listed["0.4.31"].requirements == ("jax[cpu]==0.4.31", "scipy")
    assert sorted(index.metadata_reads) == sorted(f"jax-{v}-py3-none-any.whl" for v in JAX_METADATA)


def test_find_links_leave_the_judgement_to_the_probe(matrix: Any) -> None:
    candidate = candidate_for(matrix, "0.4.38", InstallKey("cpu", find_links=("/wheels",)), MetadataIndex())  # type: ignore[arg-type]
    assert (candidate.python, candidate.jaxlib, candidate.problem) == (None, "0.4.38", "")
    assert dataclasses.asdict(candidate)["version"] == "0.4.38"
    with_archive = dataclasses.replace(matrix, install=dataclasses.replace(matrix.install, jaxlib_archive="https://a"))
    pruned = candidate_for(with_archive, "0.4.32", InstallKey("cpu"), MetadataIndex())  # type: ignore[arg-type]
    assert (pruned.jaxlib, pruned.problem) == ("0.4.32", "")  # the archive may have it: the probe will tell
