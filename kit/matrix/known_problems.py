"""Known upstream problems the matrix's own checks measure: catalogue entries with a ``matrix_check``.

An entry of the catalogue (``known/ID.toml``, `kit.known.catalogue`) that names a
check of matrix.toml (``matrix_check = "scaling"``) is cited in matrix.md's answer:
the release range that check's records measured, next to the release its
``[fix]`` went into upstream. These are citations, never verdicts: every verdict
in the report comes from a record. A project's own ``known/`` folder beside its
matrix.toml adds its entries (docs/known.md), so a user cites their own bug next to
their own check the same way.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from ..known.catalogue import Entry, UpstreamFix, load_catalogues
from ..package_files import catalogue_folder
from ..targets import JAX_PLATFORM

UpstreamChange = UpstreamFix
"""A change in JAX that fixed a problem, as cited in the report (the catalogue's ``[fix]``)."""


@dataclass(frozen=True)
class KnownProblem:
    key: str
    check: str
    title: str
    links: tuple[str, ...]
    fix: UpstreamChange | None
    """None while upstream has no fix (a user's own open bug)."""
    # Where the bug shows, as records name platforms; a clean result on another backend does not clear a release.
    shows_on: tuple[str, ...] = ("cpu", "gpu")


def cited(entries: Sequence[Entry]) -> tuple[KnownProblem, ...]:
    """The entries a matrix check measures, as the report cites them."""
    return tuple(KnownProblem(key=e.id, check=e.matrix_check, title=e.title, links=e.links or (e.upstream,),
                              fix=e.fix, shows_on=tuple(dict.fromkeys(JAX_PLATFORM.get(b, b) for b in e.shows_on)))
                 for e in entries if e.matrix_check)


def load_known_problems(folders: Sequence[Path] | None = None) -> tuple[KnownProblem, ...]:
    """The cited problems of the catalogues ``folders`` (default: the package's); ConfigError naming a bad entry."""
    return cited(load_catalogues(list(folders) if folders else [catalogue_folder()]))
