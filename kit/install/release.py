"""A release on this machine: how it installs here, resolved from metadata without downloading wheels.

The drivers (one run, the matrix sweep, bisect, ``nox -s plan``) ask this of
every release they touch, here, so a change to how a release is planned
happens in one place: `resolve_release` gives the install plan and the Python
that installs it (or why none does), from the environment's lock when it was
built. Building the environment is `kit.install.environment`; whether a
record of the release is current is `kit.records.currency`.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Sequence

from ..config import Matrix
from .envs import Env, available_pythons, env_path, finished_env
from ..errors import ArchiveUnreachable, IndexUnreachable, UsageError
from ..config import index_pages
from .index import PackageIndex
from .key import InstallKey
from .pages import plan_pages, require_pages
from .plan import (
    InstallPlan,
    Resolution,
    choose_python,
    how_to_supply,
    missing_everywhere,
    plan_install,
    unresolvable_reason,
)
from .refusals import blamed_input, raise_if_offline
from .uv_errors import NETWORK_TIP, cache_gap
from .resolutions import ResolutionStore
from .lockfile import Lock, LockSettings, current_lock, install_settings, write_lock


@dataclass(frozen=True)
class ResolvedRelease:
    """A release's install plan and the Python it resolves on, or why none does."""

    plan: InstallPlan
    resolution: Resolution | None
    attempts: tuple[Resolution, ...] = ()
    problem: str = ""
    settings: LockSettings = field(default_factory=dict)
    """The install settings that decided it (the lock's key)."""
    lock: Lock | None = None
    """The lock it was read from; None when it was resolved just now."""

    @property
    def python(self) -> str | None:
        return self.resolution.python if self.resolution else None

    @property
    def versions(self) -> dict[str, str]:
        """Every package resolved and its version ({} when none resolves)."""
        return dict(self.resolution.versions) if self.resolution else {}

    @property
    def how_to_supply(self) -> str:
        """Where to get the wheels the index lacks, for a release that does not resolve."""
        return how_to_supply(self.plan.jax)


def open_index(matrix: Matrix) -> PackageIndex:
    """The package index matrix.toml names (one per driver, so its pages are read once); for jax-kit, its pages
    kept in the user cache (`kit.config.index_pages`)."""
    return PackageIndex(matrix.install.index_url, index_pages(matrix))


def resolve_release(matrix: Matrix, version: str, key: InstallKey, index: PackageIndex | None = None,
                    offline: bool = False, refresh: bool = False) -> ResolvedRelease:
    """The release's install plan and the first Python in preference order that installs it.

    A release whose environment was built answers from its lock (no index,
    no uv) unless ``refresh``. Otherwise the index is asked once, quickly, so
    an unreachable index is `IndexUnreachable` in seconds and a version the
    index does not have is a `UsageError`; every other page the plan reads
    (extra indexes, find-links pages, JAX's archive when it is tried) is
    probed the same way (`pages.require_pages`); then uv resolves: from its
    cache alone first, which answers in hundredths of a second where its
    pages hold the whole era (`kit.install.uv_cache`), then (unless
    ``offline``) from the index; a closed era's answer is kept
    (`kit.install.resolutions`) and given back without uv, unless ``refresh``.
    Installed Pythons are
    tried first; a Python uv can supply is tried only when none of them works.
    ``key.python`` is tried before the others (see `install.choose_python`).
    ``key.requires``: a check's extra packages (`kit.requirements`), resolved
    with the release under its era cut-off; they key their own plan and lock.
    ``key.pins`` (``NAME==VERSION``) are held fixed, whatever the release's era would choose.
    """
    release = matrix.release(version)
    settings = install_settings(matrix, release, key)
    lock = None if refresh else current_lock(matrix.envs_dir, settings)
    if lock is not None:
        return ResolvedRelease(lock.plan, lock.resolution, (), "", settings, lock)
    index = index or open_index(matrix)
    if not offline:
        try:
            index.check_reachable()
        except IndexUnreachable as exc:
            raise IndexUnreachable(f"jax {version} needs the package index to resolve its install, and {exc}",
                                   exc.tip) from None
    if not (key.find_links or release.find_links or release.extra_index_urls
            or matrix.install.find_links or matrix.install.extra_index_urls):
        unknown = index.unknown_release(version)
        if unknown:
            # A page that exists wherever the kit runs: the index's own list (`nox -l` is not there for jax-kit).
            raise UsageError(unknown, f"check the version number; the index lists every release it has at "
                                      f"{index.url.rstrip('/')}/jax/")
    plan = plan_release(matrix, version, key, index)
    if not offline:
        require_pages(plan_pages(plan), version)  # an outage of any page is exit 4, before uv retries it per Python
    store = resolution_store(matrix, read=not refresh)
    resolution, attempts = _cache_first(plan, offline, key.python, store)
    if resolution is None and not offline:  # the kit's own offline try is asked of the index next: no verdict yet
        raise_if_offline(plan)  # the user's UV_OFFLINE: uv's cache alone said no, which says nothing of the release
        blamed = blamed_input(plan, attempts)  # a --pin or --requires uv blames: the input's fault, not the release's
        if blamed is not None:
            raise blamed
    archive = matrix.install.jaxlib_archive
    if resolution is None and not offline and archive and archive not in plan.find_links and _lacks_jaxlib(attempts):
        return _from_archive(plan, attempts, archive, settings)
    problem = "" if resolution else unresolvable_reason(plan, attempts)
    return ResolvedRelease(plan, resolution, tuple(attempts), problem, settings)


def locked_release(matrix: Matrix, version: str, key: InstallKey) -> ResolvedRelease | None:
    """The release as the lock of its built environment has it, or None: no index, no uv, in milliseconds.

    For callers that only want to know what a release installed here, if it
    ever was (bisect's probe cache is keyed by every installed package).
    """
    settings = install_settings(matrix, matrix.release(version), key)
    lock = current_lock(matrix.envs_dir, settings)
    return ResolvedRelease(lock.plan, lock.resolution, (), "", settings, lock) if lock is not None else None


def plan_release(matrix: Matrix, version: str, key: InstallKey, index: PackageIndex | None = None) -> InstallPlan:
    """The release's install plan alone, nothing resolved: for callers that judge from index metadata."""
    return plan_install(matrix, matrix.release(version), key, index or open_index(matrix))


def installed_pythons(plan: InstallPlan) -> list[str]:
    """The plan's Pythons that are installed here, in its order of preference."""
    return available_pythons(plan.pythons)


def _cache_first(plan: InstallPlan, offline: bool, first_python: str | None,
                 store: ResolutionStore) -> tuple[Resolution | None, list[Resolution]]:
    """uv's cache alone first (hundredths of a second), then, unless ``offline``, the index.

    The cache's answer stands where it chose the Python the index would: every
    Python it passed over failed on what it read (no wheels for it), not on
    what the cache lacks. "Not installable" is always the index's word.
    """
    resolution, attempts = _first_python(plan, True, first_python, store)
    if offline or (resolution is not None and not any(cache_gap(attempt.error) for attempt in attempts)):
        return resolution, attempts
    return _first_python(plan, False, first_python, store)


def resolution_store(matrix: Matrix, read: bool = True) -> ResolutionStore:
    """Where closed eras' resolutions are kept, beside the locks (``read=False``: ``--refresh``, keep only)."""
    return ResolutionStore(matrix.envs_dir / "resolutions", read=read)


def _first_python(plan: InstallPlan, offline: bool, first_python: str | None = None,
                  store: ResolutionStore | None = None) -> tuple[Resolution | None, list[Resolution]]:
    """Installed Pythons in preference order (``first_python`` before them) first; then those uv could supply."""
    installed = installed_pythons(plan)
    resolution, attempts = choose_python(plan, installed, offline=offline, first=first_python, store=store)
    stop = attempts and (missing_everywhere(attempts[-1], (*plan.requires, *plan.pins))
                         or (offline and cache_gap(attempts[-1].error)))  # no other Python changes either answer
    if resolution is None and not stop:
        others = [python for python in plan.pythons if python not in installed]
        resolution, more = choose_python(plan, others, offline=offline, store=store)
        attempts += more
    return resolution, attempts


def _lacks_jaxlib(attempts: Sequence[Resolution]) -> bool:
    return bool(attempts) and "no version of jaxlib==" in attempts[-1].error


def _from_archive(plan: InstallPlan, attempts: list[Resolution], archive: str,
                  settings: LockSettings) -> ResolvedRelease:
    """The index lacks the release's jaxlib: try JAX's archive of pruned jaxlibs as a find-links.

    The archive may well have it, so an archive out of reach leaves the
    release's installability unknown: `ArchiveUnreachable` (an `IndexUnreachable`),
    not "not installable"; a bisect skips that one release on it.
    """
    try:
        require_pages([archive], plan.jax, what="the archive of pruned jaxlibs (install.jaxlib_archive)",
                      tip=f'{NETWORK_TIP}; or set install.jaxlib_archive = "" in matrix.toml '
                          'to judge from the index alone')
    except IndexUnreachable as unreachable:
        raise ArchiveUnreachable(str(unreachable), unreachable.tip) from unreachable
    wider = replace(plan, find_links=plan.find_links + (archive,),
                    notes=plan.notes + (f"the index lacks its jaxlib; trying JAX's archive of pruned jaxlibs {archive}",))
    resolution, more = _first_python(wider, offline=False)  # no store: the archive's page is no closed era
    problem = "" if resolution else unresolvable_reason(wider, more)
    return ResolvedRelease(wider, resolution, tuple(attempts + more), problem, settings)


def lock_release(matrix: Matrix, resolved: ResolvedRelease) -> Path | None:
    """Keep a resolution whose environment is built, so the next session need not resolve it."""
    if resolved.resolution is None or resolved.lock is not None:
        return resolved.lock.path if resolved.lock else None
    return write_lock(matrix.envs_dir, resolved.settings, resolved.plan, resolved.resolution)


def built_env(matrix: Matrix, version: str, key: InstallKey) -> Env | None:
    """The release's environment, as these settings install it, if it is built here; resolves nothing.

    The pins and a check's extra packages key the lock as they key the
    environment: without them this would answer for another environment.
    """
    settings = install_settings(matrix, matrix.release(version), key)
    lock = current_lock(matrix.envs_dir, settings)
    if lock is None:
        return None
    return finished_env(env_path(matrix.envs_dir, lock.plan, lock.resolution))
