"""The one in-memory package index of the tests: what the kit asks of `kit.install.index.PackageIndex`,
answered from tables.

`TableIndex` answers with the tables it is given (release dates, extras, the releases, a
not-installable release's neighbours); `MetadataIndex` is one with two project pages and the jax
wheels' METADATA, as the candidate list reads them. (tests/fake_index.py serves an index over HTTP
instead, for uv and the network faults.)
"""

from __future__ import annotations

from datetime import datetime, timezone
from email.message import Message
from email.parser import Parser
from pathlib import Path
from typing import Any

from packaging.version import Version

from kit.config import parse_matrix
from kit.install.index import DistFile, Project

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


class TableIndex:
    """An index that is up and answers from its tables; what a table lacks, it does not have."""

    def __init__(self, *, dates: dict[str, datetime] | None = None, extras: dict[str, set[str]] | None = None,
                 releases: list[str] | None = None, neighbours: list[str] | None = None,
                 projects: dict[str, Project] | None = None, cache_dir: Path = Path("/nonexistent")) -> None:
        self.url = "https://pypi.org/simple"
        self.cache_dir = cache_dir
        self.dates = dates
        self.extras = extras or {}
        self.projects = projects or {}
        self.releases = releases
        self.given_neighbours = neighbours or []
        self.metadata_reads: list[str] = []

    def check_reachable(self) -> None:
        pass

    def unknown_release(self, version: str) -> str:
        return ""

    def release_date(self, version: str) -> datetime | None:
        return UPLOADED if self.dates is None else self.dates.get(version)

    def jax_extras(self, version: str) -> set[str]:
        return self.extras[version]

    def jax_releases(self, include_yanked: bool = False) -> list[Version]:
        if self.releases is not None:
            return [Version(v) for v in self.releases]
        return self.projects["jax"].versions(include_yanked)

    def neighbours(self, version: str) -> list[str]:
        return self.given_neighbours

    def project(self, name: str) -> Project:
        return self.projects[name]

    def core_metadata(self, file: DistFile) -> Message:
        self.metadata_reads.append(file.filename)
        return Parser().parsestr(JAX_METADATA[str(file.version)])


class MetadataIndex(TableIndex):
    """The index as candidates reads it: two project pages and the jax wheels' METADATA."""

    def __init__(self) -> None:
        super().__init__(projects={
            "jax": Project("jax", tuple([jax_file(v, yanked=v == "0.4.32") for v in JAX_METADATA])),
            # 0.4.38's jaxlib only for a Python this machine does not have; 0.4.32's jaxlib pruned.
            "jaxlib": Project("jaxlib", (jaxlib_file("0.4.31", "3.12"), jaxlib_file("0.4.36", "3.12"),
                                         jaxlib_file("0.4.38", "3.99"), jaxlib_file("0.5.1", "3.12"), jaxlib_file("0.4.34", "3.13"),
                                         jaxlib_file("0.5.0", "3.12"))),
        })


def candidates_matrix() -> Any:
    """No archive of pruned jaxlibs: the index alone decides what is installable."""
    return parse_matrix({"install": {"pythons": ["3.13", "3.12"], "jaxlib_archive": ""},
                         "release": [{"version": "0.4.31"}], "checks": {"scaling": {}}})
