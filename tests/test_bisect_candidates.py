"""kit.bisect.candidates: the candidate list from index metadata, with nothing resolved."""

from __future__ import annotations

import dataclasses
from datetime import datetime, timezone
from email.message import Message
from email.parser import Parser
from pathlib import Path
from typing import Any

import pytest
from packaging.version import Version

from kit.install import release
from kit.bisect.candidates import candidate_for, list_candidates, release_versions
from kit.config import parse_matrix
from kit.errors import UsageError
from kit.install.index import DistFile, Project
from kit.install.key import InstallKey

JAX_METADATA = {
    "0.4.31": "Provides-Extra: cpu\nProvides-Extra: cuda12\nRequires-Dist: jaxlib ==0.4.31 ; extra == 'cpu'\n"
              "Requires-Dist: jaxlib ==0.4.31 ; extra == 'cuda12'\nRequires-Dist: jaxlib >=0.4.27\n",
    "0.4.32": "Provides-Extra: cpu\nRequires-Dist: jaxlib ==0.4.32 ; extra == 'cpu'\n",
    "0.4.34": "Provides-Extra: cpu\nRequires-Dist: jaxlib ==0.4.34 ; extra == 'cpu'\n",  # wheels for 3.13 only
    "0.4.37": "Provides-Extra: cpu\nRequires-Dist: jaxlib ==0.4.36 ; extra == 'cpu'\n",  # a jax-only release
    "0.4.38": "Provides-Extra: cpu\nRequires-Dist: jaxlib ==0.4.38 ; extra == 'cpu'\n",
    # Since 0.4.30 the cpu extra is empty and jax bounds jaxlib itself; 0.5.2 had no jaxlib of its own.
    "0.5.2": "Provides-Extra: cpu\nRequires-Dist: jaxlib<=0.5.2,>=0.5.1\nRequires-Dist: jaxlib==0.5.1; extra == 'ci'\n",
}
UPLOADED = datetime(2024, 12, 1, tzinfo=timezone.utc)


def jax_file(version: str, yanked: bool = False) -> DistFile:
    return DistFile(f"jax-{version}-py3-none-any.whl", Version(version), f"https://files/jax-{version}.whl",
                    UPLOADED, yanked, ("py3",), yanked_reason="broken wheel" if yanked else "")


def jaxlib_file(version: str, python: str) -> DistFile:
    tag = f"cp{python.replace('.', '')}"
    return DistFile(f"jaxlib-{version}-{tag}-{tag}-manylinux2014_x86_64.whl", Version(version),
                    "https://files/jaxlib.whl", UPLOADED, False, (tag,))


class MetadataIndex:
    """The index as candidates reads it: two project pages and the jax wheels' METADATA."""

    def __init__(self) -> None:
        self.url = "https://pypi.org/simple"
        self.cache_dir = Path("/nonexistent")
        self.metadata_reads: list[str] = []
        self.projects = {
            "jax": Project("jax", tuple([jax_file(v, yanked=v == "0.4.32") for v in JAX_METADATA])),
            # 0.4.38's jaxlib only for a Python this machine does not have; 0.4.32's jaxlib pruned.
            "jaxlib": Project("jaxlib", (jaxlib_file("0.4.31", "3.12"), jaxlib_file("0.4.36", "3.12"),
                                         jaxlib_file("0.4.38", "3.99"), jaxlib_file("0.5.1", "3.12"), jaxlib_file("0.4.34", "3.13"),
                                         jaxlib_file("0.5.0", "3.12"))),
        }

    def project(self, name: str) -> Project:
        return self.projects[name]

    def jax_releases(self, include_yanked: bool = False) -> list[Version]:
        return self.projects["jax"].versions(include_yanked)

    def release_date(self, version: str) -> datetime:
        return UPLOADED

    def core_metadata(self, file: DistFile) -> Message:
        self.metadata_reads.append(file.filename)
        return Parser().parsestr(JAX_METADATA[str(file.version)])


@pytest.fixture
def matrix() -> Any:
    # No archive of pruned jaxlibs: the index alone decides what is installable.
    return parse_matrix({"install": {"pythons": ["3.13", "3.12"], "jaxlib_archive": ""},
                         "release": [{"version": "0.4.31"}], "checks": {"scaling": {}}})


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
    assert listed["0.4.31"].uploaded == "2024-12-01" and listed["0.4.31"].yanked is None
    assert listed["0.4.32"].yanked == "broken wheel"
    assert "has no jaxlib 0.4.32 wheels (tried Python 3.12)" in listed["0.4.32"].problem
    assert listed["0.4.37"].jaxlib == "0.4.36" and listed["0.4.37"].python == "3.12"
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
