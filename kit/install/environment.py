"""How does this run get its Python? One entry point, one value the runner consumes.

`prepare` answers it for every driver (a check session, the matrix, bisect)
and returns `Prepared`: the install plan and resolution the record quotes,
and an `Environment` (the interpreter, the packages installed in it, extra
``PYTHONPATH`` entries, and whether it was built now or reused), or the
reason there is none ("not installable here").

A release's environment is era-resolved and built once by
`kit.install.release` and `kit.install.envs`, reused after that. A check's
extra packages (``requires``: a tuple of requirements in `kit.requirements`'
normal form) are an input here, not a side path: they are resolved with the
release under the same era cut-off, and the requirement set keys the plan,
the lock and the environment's folder, so a check that needs flax gets its
own environment and the built-in checks' environments stay as they are.
``Environment.pins`` then names the version of each extra package.

The other ways to get a Python are each one more way to make an
`Environment`, chosen here, so the runner never learns where its Python came from:

* a JAX commit's sources laid over a built release environment: the built
  `Environment` with the commit's tree in ``pythonpath`` (first on the path,
  so its ``jax/`` shadows the installed one);
* an existing interpreter (``--python``): ``python`` is the user's, ``pins``
  what it has installed, ``obtained`` says so.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Mapping

from ..config import Matrix
from ..errors import UsageError
from ..requirements import installed_versions, versions_text
from .envs import Env, InstallFailed, ensure_env, pick_backend
from .index import PackageIndex
from .plan import InstallPlan, Resolution
from .release import lock_release, open_index, resolve_release

Log = Callable[[str], None]

BUILT, REUSED = "built", "reused"


@dataclass(frozen=True)
class Environment:
    """The Python a check runs with, and what it has."""

    python: Path
    """The interpreter to start."""
    pins: Mapping[str, str]
    """Installed package versions (jax, jaxlib, numpy, scipy, ...), as the resolver pinned them."""
    obtained: str
    """How it was obtained: `BUILT` now, or `REUSED` from an earlier build."""
    pythonpath: tuple[Path, ...] = ()
    """Extra import paths, before the repository root (none yet: a commit's sources will go here)."""
    python_version: str | None = None
    """The interpreter's full version (3.13.0) where known without starting it."""

    @property
    def reused(self) -> bool:
        return self.obtained == REUSED


@dataclass
class Prepared:
    """A release made ready to run a check: an environment, or the reason there is none."""

    plan: InstallPlan
    resolution: Resolution | None
    environment: Environment | None
    problem: str = ""
    attempts: list[Resolution] = field(default_factory=list)


def prepare(matrix: Matrix, version: str, backend: str, log: Log, *, index: PackageIndex | None = None,
            find_links: tuple[str, ...] = (), refresh: bool = False, first_python: str | None = None,
            requires: tuple[str, ...] = ()) -> Prepared:
    """Plan the release, pick a Python, and build (or reuse) its environment.

    ``refresh`` resolves again even where the environment's lock answers;
    ``first_python`` is tried first when resolving (bisect knows it from the
    index's metadata); ``requires`` adds a check's extra packages, of the
    release's era, in an environment of their own.
    """
    if backend == "cuda":
        _require_gpu(version)
    resolved = resolve_release(matrix, version, backend, index or open_index(matrix), find_links,
                               refresh=refresh, first_python=first_python, requires=requires)
    plan, resolution, attempts = resolved.plan, resolved.resolution, list(resolved.attempts)
    if resolved.lock is not None:
        log(f"jax {plan.jax}: as locked in {resolved.lock.path} (resolved {resolved.lock.resolved_at}; "
            "-- --refresh resolves again)")
    else:
        for note in plan.notes:
            log(note)
        log(f"resolved {', '.join(plan.requirements)} as of {plan.exclude_newer or 'today'}")
    if resolution is None:
        return Prepared(plan, None, None, resolved.problem, attempts)
    extras = versions_text(installed_versions(plan.requires, resolution.pins))
    log(f"Python {resolution.python}: jaxlib {resolution.pins.get('jaxlib', '?')}, "
        f"numpy {resolution.pins.get('numpy', '?')}, scipy {resolution.pins.get('scipy', '?')}"
        + (f"; requires: {extras}" if extras else ""))
    try:
        env = ensure_env(matrix.envs_dir, plan, resolution, pick_backend(), log)
    except InstallFailed as exc:
        return Prepared(plan, resolution, None, f"install failed: {exc}", attempts)
    lock_release(matrix, resolved)
    return Prepared(plan, resolution, release_environment(env), "", attempts)


def release_environment(env: Env) -> Environment:
    """A release's built environment as the runner consumes it."""
    return Environment(python=env.python, pins=dict(env.pins), obtained=REUSED if env.reused else BUILT,
                       python_version=env.python_version())


def _require_gpu(version: str) -> None:
    if not shutil.which("nvidia-smi") and not os.environ.get("KIT_ALLOW_NO_GPU"):
        raise UsageError(
            "no NVIDIA GPU is visible here (nvidia-smi not found), so --backend cuda would download "
            "gigabytes of CUDA wheels and then run on the CPU",
            f"check the install plan without downloading: nox -s plan -- {version} --backend cuda "
            "(set KIT_ALLOW_NO_GPU=1 to install anyway)",
        )
