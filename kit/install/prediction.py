"""What a release would install here, from the index's metadata alone: nothing resolved or downloaded.

Bisect lists every candidate release this way in seconds (the PEP 691 JSON
pages of jax and jaxlib, and each jax wheel's METADATA, fetched once ever):
the jaxlib its extra pins and the Python it would get, or why it cannot be
installed, in the same words `kit.install.plan.unresolvable_reason` uses when
the resolver finds it out. The Python named is the one the install plan
prefers among those installed here that the pinned jaxlib has wheels for,
which is what the resolver picks unless numpy or scipy of that era cannot be
found for it; a release is resolved fully (uv, with the era cut-off) only when
it is probed.
"""

from __future__ import annotations

from dataclasses import dataclass

from packaging import tags
from packaging.requirements import InvalidRequirement, Requirement
from packaging.specifiers import SpecifierSet
from packaging.utils import parse_wheel_filename
from packaging.version import Version

from ..config import Matrix
from .index import DistFile, PackageIndex
from .key import InstallKey
from .plan import InstallPlan, backend_extra, no_extra, no_python, no_wheels
from .release import installed_pythons, plan_release


@dataclass(frozen=True)
class Prediction:
    """A release's plan (not resolved), the jaxlib and Python it would get here, or why it would not install."""

    plan: InstallPlan
    python: str | None = None
    """None where no installed Python has its wheels (uv may supply one when it is probed)."""
    jaxlib: str | None = None
    problem: str = ""


def predict(matrix: Matrix, version: str, key: InstallKey, index: PackageIndex) -> Prediction:
    """How ``version`` would install here as ``key`` asks, judged from the index's metadata."""
    plan = plan_release(matrix, version, key, index)
    backend = key.backend
    if not _jax_wheels(index, version):
        # An sdist-only release (jax 0.4.13, 0.4.14) has no METADATA on the index to judge from:
        # the resolver builds it when it is probed, as a check session does.
        return Prediction(plan, next(iter(installed_pythons(plan)), None))
    spec = jaxlib_requirement(index, version, backend)
    if spec is None:
        return Prediction(plan, problem=no_extra(version, backend))
    installed = installed_pythons(plan)
    for python in installed:
        jaxlib = _newest_jaxlib(index, spec, python)
        if jaxlib is not None:
            return Prediction(plan, python, jaxlib)
    for python in (p for p in plan.pythons if p not in installed):
        jaxlib = _newest_jaxlib(index, spec, python)
        if jaxlib is not None:
            return Prediction(plan, None, jaxlib)  # for a Python uv may supply when probed (kit.install.release)
    if plan.find_links or plan.extra_index_urls or matrix.install.jaxlib_archive:
        return Prediction(plan, None, _pinned(spec))  # wheels may come from there: the probe will tell
    if not installed:
        return Prediction(plan, problem=no_python(plan.pythons))
    wanted = _pinned(spec) or str(spec)
    tried = ", ".join(installed)
    anywhere = any(spec.contains(v) for v in index.project("jaxlib").versions())
    return Prediction(plan, problem=no_wheels(index.url, "jaxlib", wanted, tried, on_this_platform=anywhere))


def _jax_wheels(index: PackageIndex, version: str) -> list[DistFile]:
    wanted = Version(version)
    return [f for f in index.project("jax").files if f.version == wanted and f.filename.endswith(".whl")]


def jaxlib_requirement(index: PackageIndex, version: str, backend: str) -> SpecifierSet | None:
    """What ``jax[<backend's extra>]==version`` asks of jaxlib, from the wheel's METADATA.

    Older releases pin it in the extra (``jaxlib==0.4.20; extra == "cpu"``);
    since 0.4.30 the extra is empty and jax itself bounds it
    (``jaxlib<=0.5.2,>=0.5.1``), so every requirement that applies counts.
    """
    wheels = sorted(_jax_wheels(index, version), key=lambda f: f.yanked)  # a yanked release still says what it pinned
    if not wheels:
        return None
    metadata = index.core_metadata(wheels[0])
    extra = backend_extra(backend, set(metadata.get_all("Provides-Extra") or []))
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
