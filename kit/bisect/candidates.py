"""The releases between the two ends, and what each one would install here.

Listed from the index's own metadata, in seconds: upload times and yanked
state from the jax project page, and what each release would install here
(the jaxlib its extra pins, the Python it would get, or why not) from
`kit.install.prediction`, the install side's answer from metadata alone.
Nothing is resolved here: a release is resolved fully (uv, with the era
cut-off) only when it is probed, once.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from packaging.version import Version

from ..config import Matrix
from ..errors import UsageError
from ..install import InstallKey, PackageIndex, predict, versions_between


@dataclass(frozen=True)
class Candidate:
    """One release to probe, and what it would install here (from the index's metadata)."""

    version: str
    requirements: tuple[str, ...]
    exclude_newer: str | None
    python: str | None
    jaxlib: str | None
    problem: str = ""
    """Why it cannot be installed here, when the metadata already says so."""
    uploaded: str | None = None
    yanked: str | None = None
    """The yanked reason (PEP 592), or None for a release the index still serves."""


def release_versions(index: PackageIndex, good: str, bad: str) -> list[str]:
    """Final releases from the index between the bounds, yanked ones too, oldest first."""
    releases = index.jax_releases(include_yanked=True)
    for flag, version in (("--good", good), ("--bad", bad)):
        if Version(version) not in releases:
            near = [str(v) for v in releases if abs(_ordinal(v) - _ordinal(Version(version))) <= 2][:6]
            raise UsageError(f"{flag} {version} is not a jax release on {index.url}",
                             f"nearby releases: {', '.join(near) or 'none'}")
    return [str(v) for v in versions_between(releases, good, bad) if not v.is_devrelease]


def _ordinal(version: Version) -> int:
    """A rough distance measure, only for naming nearby releases in a tip."""
    parts = (list(version.release) + [0, 0, 0])[:3]
    return parts[0] * 10000 + parts[1] * 100 + parts[2]


def list_candidates(matrix: Matrix, versions: Sequence[str], key: InstallKey, index: PackageIndex) -> list[Candidate]:
    """Every release described from the index's metadata, in the given order."""
    index.project("jax"), index.project("jaxlib")  # two pages, fetched once before the threads start
    # Metadata reads go one at a time over one kept-alive connection (kit.install.wheel_metadata): about
    # 25 ms each here, where threads opening a connection each stalled 5 s now and then.
    return [candidate_for(matrix, v, key, index) for v in versions]


def candidate_for(matrix: Matrix, version: str, key: InstallKey, index: PackageIndex) -> Candidate:
    """One release: its plan (no resolve), the jaxlib it would get and the Python, or why not."""
    predicted = predict(matrix, version, key, index)
    project = index.project("jax")
    uploaded = project.first_upload(version)
    return Candidate(version, predicted.plan.requirements, predicted.plan.exclude_newer, predicted.python,
                     predicted.jaxlib, predicted.problem, uploaded=uploaded.strftime("%Y-%m-%d") if uploaded else None,
                     yanked=project.yanked(version))
