"""The releases between the two ends, and what each one would install here.

Listed from the index's own metadata, in seconds: the PEP 691 JSON pages of
jax and jaxlib (upload times, yanked state, which Pythons each jaxlib has
wheels for) and each jax wheel's METADATA (the jaxlib its extra pins, fetched
once ever and kept on disk). Nothing is resolved here: a release is resolved
fully (uv, with the era cut-off) only when it is probed, once. The Python
named is the one the install plan prefers among those installed here that
the pinned jaxlib has wheels for, which is what the resolver picks unless
numpy or scipy of that era cannot be found for it.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Sequence

from packaging import tags
from packaging.requirements import InvalidRequirement, Requirement
from packaging.specifiers import SpecifierSet
from packaging.utils import parse_wheel_filename
from packaging.version import Version

from ..config import Matrix
from ..errors import UsageError
from ..install.index import PackageIndex, versions_between
from ..install.release import installed_pythons, plan_release

# GPU extras, newest first, as kit.install.plan picks them; "cpu" for the CPU build.
_EXTRAS = {"cpu": ("cpu",), "cuda": ("cuda13", "cuda12", "cuda12_pip", "cuda")}


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

    @property
    def fingerprint_args(self) -> dict[str, Any]:
        return {"python": self.python, "requirements": self.requirements, "exclude_newer": self.exclude_newer}


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


def list_candidates(matrix: Matrix, versions: Sequence[str], backend: str, index: PackageIndex,
                    find_links: tuple[str, ...]) -> list[Candidate]:
    """Every release described from the index's metadata, in the given order."""
    index.project("jax"), index.project("jaxlib")  # two pages, fetched once before the threads start
    # Metadata reads go one at a time over one kept-alive connection (kit.install.wheel_metadata): about
    # 25 ms each here, where threads opening a connection each stalled 5 s now and then.
    return [candidate_for(matrix, v, backend, index, find_links) for v in versions]


def candidate_for(matrix: Matrix, version: str, backend: str, index: PackageIndex,
                  find_links: tuple[str, ...]) -> Candidate:
    """One release: its plan (no resolve), the jaxlib it would get and the Python, or why not."""
    plan = plan_release(matrix, version, backend, index, find_links)
    project = index.project("jax")
    uploaded = project.first_upload(version)
    base = Candidate(version, plan.requirements, plan.exclude_newer, None, None,
                     uploaded=uploaded.strftime("%Y-%m-%d") if uploaded else None, yanked=project.yanked(version))
    spec = jaxlib_requirement(index, version, backend)
    if spec is None:
        return replace(base, problem=f"jax {version} declares no {backend} extra")
    installed = installed_pythons(plan)
    for python in installed:
        jaxlib = _newest_jaxlib(index, spec, python)
        if jaxlib is not None:
            return replace(base, python=python, jaxlib=jaxlib)
    wanted = _pinned(spec) or f"jaxlib{spec}"
    for python in (p for p in plan.pythons if p not in installed):
        jaxlib = _newest_jaxlib(index, spec, python)
        if jaxlib is not None:
            return replace(base, jaxlib=jaxlib)  # for a Python uv may supply when probed (kit.install.release)
    if plan.find_links or plan.extra_index_urls or matrix.install.jaxlib_archive:
        return replace(base, jaxlib=_pinned(spec))  # wheels may come from there: the probe will tell
    if not installed:
        return replace(base, problem=f"none of Python {', '.join(plan.pythons)} is installed here")
    if not any(spec.contains(v) for v in index.project("jaxlib").versions()):
        return replace(base, problem=f"{index.url} has no jaxlib {wanted} wheels (tried Python {', '.join(installed)})")
    return replace(base, problem=f"{index.url} has no jaxlib {wanted} wheels for Python "
                                 f"{', '.join(installed)} on this platform")


def jaxlib_requirement(index: PackageIndex, version: str, backend: str) -> SpecifierSet | None:
    """What ``jax[<backend's extra>]==version`` asks of jaxlib, from the wheel's METADATA.

    Older releases pin it in the extra (``jaxlib==0.4.20; extra == "cpu"``);
    since 0.4.30 the extra is empty and jax itself bounds it
    (``jaxlib<=0.5.2,>=0.5.1``), so every requirement that applies counts.
    """
    wanted = Version(version)
    wheels = sorted((f for f in index.project("jax").files if f.version == wanted and f.filename.endswith(".whl")),
                    key=lambda f: f.yanked)  # a yanked release still says what it pinned
    if not wheels:
        return None
    metadata = index.core_metadata(wheels[0])
    declared = set(metadata.get_all("Provides-Extra") or [])
    extra = next((e for e in _EXTRAS.get(backend, ()) if e in declared), None)
    if extra is None:
        return None
    spec = SpecifierSet()
    for line in metadata.get_all("Requires-Dist") or []:
        try:
            requirement = Requirement(line)
        except InvalidRequirement:
            continue
        if requirement.name == "jaxlib" and (requirement.marker is None
                                             or requirement.marker.evaluate({"extra": extra})):
            spec &= requirement.specifier
    return spec


def pinned_jaxlib(index: PackageIndex, version: str, backend: str) -> str | None:
    """The newest jaxlib on the index that ``jax[<extra>]==version`` accepts (what a resolver picks)."""
    spec = jaxlib_requirement(index, version, backend)
    if spec is None:
        return None
    accepted = [v for v in index.project("jaxlib").versions() if spec.contains(v)]
    return str(accepted[-1]) if accepted else _pinned(spec)


def _pinned(spec: SpecifierSet) -> str | None:
    """The one version ``==X`` or ``<=X,>=X`` names, if it names one."""
    exact = [s.version for s in spec if s.operator == "=="]
    if exact:
        return exact[0]
    upper = [s.version for s in spec if s.operator == "<="]
    lower = [s.version for s in spec if s.operator == ">="]
    return upper[0] if upper and upper == lower else None


def _newest_jaxlib(index: PackageIndex, spec: SpecifierSet, python: str) -> str | None:
    """The newest jaxlib the spec accepts with a wheel this machine can install under ``python``."""
    major, minor = (int(part) for part in python.split(".")[:2])
    platforms = list(tags.platform_tags())
    supported = {*tags.cpython_tags((major, minor), platforms=platforms),
                 *tags.compatible_tags((major, minor), f"cp{major}{minor}", platforms)}
    project = index.project("jaxlib")
    for version in reversed(project.versions()):
        if not spec.contains(version):
            continue
        for file in project.files_for(version):
            if file.filename.endswith(".whl") and supported & set(parse_wheel_filename(file.filename)[3]):
                return str(version)
    return None
