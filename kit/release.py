"""A release on this machine: how it installs here, and whether a record of it is current.

The drivers (one run, the matrix sweep, bisect, ``nox -s plan``) ask these
two questions of every release they touch. Each has one answer here, so a
change to how a release is planned or judged happens in one place:

* `resolve_release` — the install plan, the Python that installs it (or why
  none does), resolved from metadata without downloading wheels;
* `newest_records_here` and `record_is_current` — this machine's newest
  record of each check and release, and whether running it again would
  measure anything new.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping, Sequence

from . import __version__, records
from .config import Matrix
from .envs import available_pythons
from .index import PackageIndex
from .install import InstallPlan, Resolution, choose_python, how_to_supply, plan_install, unresolvable_reason


@dataclass(frozen=True)
class ResolvedRelease:
    """A release's install plan and the Python it resolves on, or why none does."""

    plan: InstallPlan
    resolution: Resolution | None
    attempts: tuple[Resolution, ...] = ()
    problem: str = ""

    @property
    def python(self) -> str | None:
        return self.resolution.python if self.resolution else None

    @property
    def pins(self) -> dict[str, str]:
        return dict(self.resolution.pins) if self.resolution else {}

    @property
    def how_to_supply(self) -> str:
        """Where to get the wheels the index lacks, for a release that does not resolve."""
        return how_to_supply(self.plan.jax)


def open_index(matrix: Matrix) -> PackageIndex:
    """The package index matrix.toml names (one per driver, so its pages are read once)."""
    return PackageIndex(matrix.install.index_url)


def resolve_release(matrix: Matrix, version: str, backend: str, index: PackageIndex | None = None,
                    find_links: tuple[str, ...] = (), offline: bool = False) -> ResolvedRelease:
    """Plan ``version`` for ``backend`` and pick the first Python in preference order that installs it.

    ``offline`` answers from uv's cache alone (see `install.resolve`).
    """
    plan = plan_install(matrix, matrix.release(version), backend, index or open_index(matrix), find_links)
    resolution, attempts = choose_python(plan, available_pythons(plan.pythons), offline=offline)
    problem = "" if resolution else unresolvable_reason(plan, attempts)
    return ResolvedRelease(plan, resolution, tuple(attempts), problem)


def newest_records_here(results_dir: Path, backend: str) -> dict[tuple[str, str], records.Record]:
    """This machine's newest record per (check, release) on ``backend``."""
    # Built through records.record_backend so aliases (cuda -> gpu) match the stored keys.
    wanted = records.record_backend({"requested": {"backend": backend}})
    machine = records.machine_id()
    newest, _older = records.newest_per_cell(records.load_records(results_dir).entries)
    return {(key.check, key.jax): entry.record for key, entry in newest.items()
            if key.backend == wanted and key.machine == machine}


def record_is_current(record: Mapping[str, Any], parameters: Mapping[str, Any], *, backend: str,
                      python: str | None, requirements: Sequence[str], exclude_newer: str | None) -> bool:
    """Would running the record's cell again, in the environment described, measure nothing new?

    The environment is named by what decides it (the chosen Python, the
    requirements and the era cut-off), so callers that know it from a stored
    candidate and callers that just resolved it ask the same question.
    """
    fingerprint = records.environment_fingerprint(
        python=python, requirements=list(requirements), exclude_newer=exclude_newer,
        backend=backend, machine=records.machine_id())
    return records.is_current(record, __version__, parameters, fingerprint)
