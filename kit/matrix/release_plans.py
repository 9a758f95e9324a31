"""Each release's install plan for ``nox -s matrix``, from metadata only: is a cell's record still current?

The sweep asks it of the releases that have a record (`kit.matrix.sweep.current_cells`); nothing is installed.
"""

from __future__ import annotations

import hashlib
import json
import time
from pathlib import Path
from typing import Sequence

from ..atomic_files import atomic_write_text
from ..config import Matrix
from ..install import InstallKey, PackageIndex, resolve_release, ResolvedRelease
from ..log_events import Log
from .progress import clock_text

# Asking the index whether a release installs on no Python here costs a uv
# resolve per interpreter (10-60 s in all on a busy 2-core machine), on every
# sweep, for an answer that changes only when wheels are re-uploaded. Like the
# index's own page cache, the answer is kept for an hour.
UNRESOLVABLE_TTL_S = 3600.0


def plan_releases(matrix: Matrix, versions: Sequence[str], backend: str, index: PackageIndex,
                  log: Log, refresh: bool = False, requires: tuple[str, ...] = ()) -> dict[str, ResolvedRelease | None]:
    """Each release's install plan and chosen Python, from metadata only (None: planning failed).

    uv first answers from its cache alone (about a second per release instead
    of ten against a slow index). That is sound for a release that resolves:
    the era cut-off excludes anything uploaded since the cache was filled, and
    a cache can only make a Python fail that the index would accept, which
    costs a needless rerun, never a wrongly skipped cell. A release that does
    not resolve from the cache is asked of the index, so "not installable"
    is always the index's answer (remembered for `UNRESOLVABLE_TTL_S`).
    A release whose planning fails (the index unreachable, say) is never
    current, so its cells run and report the failure themselves.
    """
    plans = {version: _resolve(matrix, version, backend, index, log, offline=True, refresh=refresh, requires=requires)
             for version in versions}
    for version, release in plans.items():
        if release is None or release.resolution is not None:
            continue
        memo = _unresolvable_memo(index, release)
        if _fresh(memo):
            log(f"jax {version}: the index could not install it {clock_text(time.time() - memo.stat().st_mtime)} "
                f"ago (asked again after {clock_text(UNRESOLVABLE_TTL_S)})")
            continue
        log(f"jax {version}: not resolvable from the uv cache; asking the index")
        asked = plans[version] = _resolve(matrix, version, backend, index, log, refresh=refresh, requires=requires)
        if asked is not None and asked.resolution is None:
            atomic_write_text(memo, json.dumps(release.plan.to_json(), indent=2))
    return plans


def _resolve(matrix: Matrix, version: str, backend: str, index: PackageIndex, log: Log,
             offline: bool = False, refresh: bool = False, requires: tuple[str, ...] = ()) -> ResolvedRelease | None:
    try:
        return resolve_release(matrix, version, InstallKey(backend, requires=requires), index, offline=offline,
                               refresh=refresh)
    except Exception as exc:  # the index unreachable, say: its cells will run and say so
        log(f"jax {version}: could not resolve ({exc}); its cells will run")
        return None


def _unresolvable_memo(index: PackageIndex, release: ResolvedRelease) -> Path:
    """Where the index's last "installs on no Python here" answer for the release is kept."""
    tried = [attempt.python for attempt in release.attempts]
    key = json.dumps([release.plan.to_json(), tried], sort_keys=True)
    digest = hashlib.sha256(key.encode()).hexdigest()[:16]
    return index.cache_dir / "unresolvable" / f"{release.plan.jax}-{digest}.json"


def _fresh(memo: Path) -> bool:
    try:
        return time.time() - memo.stat().st_mtime < UNRESOLVABLE_TTL_S
    except OSError:
        return False
