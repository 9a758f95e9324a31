"""The releases between the two ends, and what installs each one.

Listed from the index and resolved (metadata only, nothing downloaded), so
the candidate table can say up front which jaxlib and Python each release
gets and which cannot be installed here.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Sequence

from packaging.version import Version

from ..config import Matrix
from ..errors import UsageError
from ..index import PackageIndex, versions_between
from ..release import resolve_release


@dataclass(frozen=True)
class Candidate:
    """One release to probe, and what installs it (resolved, nothing downloaded)."""

    version: str
    requirements: tuple[str, ...]
    exclude_newer: str | None
    python: str | None
    jaxlib: str | None
    problem: str = ""

    @property
    def fingerprint_args(self) -> dict[str, Any]:
        return {"python": self.python, "requirements": self.requirements, "exclude_newer": self.exclude_newer}


def release_versions(index: PackageIndex, good: str, bad: str) -> list[str]:
    """Final releases from the index between the bounds, oldest first; both bounds must exist."""
    releases = index.jax_releases()
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


def resolve_candidate(matrix: Matrix, version: str, backend: str, index: PackageIndex,
                      find_links: tuple[str, ...]) -> Candidate:
    """Plan and resolve one release (metadata only) to name its jaxlib and python."""
    resolved = resolve_release(matrix, version, backend, index, find_links)
    plan = resolved.plan
    return Candidate(version, plan.requirements, plan.exclude_newer, resolved.python,
                     resolved.pins.get("jaxlib"), resolved.problem)


def resolve_candidates(matrix: Matrix, versions: Sequence[str], backend: str, index: PackageIndex,
                       find_links: tuple[str, ...]) -> list[Candidate]:
    """Every release resolved, in the given order."""
    # uv's resolves wait on the network, not the CPU: a few at once is faster.
    with ThreadPoolExecutor(max_workers=4) as pool:
        return list(pool.map(lambda v: resolve_candidate(matrix, v, backend, index, find_links),
                             versions))
