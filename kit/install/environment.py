"""How does this run get its Python? One entry point, one value the runner consumes.

`prepare` answers it for every driver (a check session, the matrix, bisect)
and returns `Prepared`: the install plan and resolution the record quotes,
and an `Environment` (the interpreter, the packages installed in it, extra
``PYTHONPATH`` entries, and whether it was built now or reused), or the
reason there is none ("not installable here").

Today there is one way: a release's environment, era-resolved and built once
by `kit.install.release` and `kit.install.envs`, reused after that. This is
the extension point for the others; each is one more way to make an
`Environment`, chosen here, so the runner never learns where its Python came from:

* a JAX commit's sources laid over a built release environment
  (`over_release`, made by `kit.install.overlay`): the built `Environment`
  with the commit's ``jax/`` and a whole ``jaxlib`` package in ``pythonpath``
  (first on the path, so they shadow the installed ones);
* a check's extra ``requires``: a built environment with more packages, its
  ``pins`` saying which;
* an existing interpreter (``--python``): ``python`` is the user's, ``pins``
  what it has installed, ``obtained`` says so.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Callable, Mapping

from ..config import Matrix
from ..errors import UsageError
from ..history.source import History
from .envs import Env, InstallFailed, ensure_env, pick_backend
from .overlay import lay_over
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
    """Extra import paths, before the repository root: a commit's sources laid over (`over_release`)."""
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
            find_links: tuple[str, ...] = (), refresh: bool = False, first_python: str | None = None) -> Prepared:
    """Plan the release, pick a Python, and build (or reuse) its environment.

    ``refresh`` resolves again even where the environment's lock answers;
    ``first_python`` is tried first when resolving (bisect knows it from the
    index's metadata).
    """
    if backend == "cuda":
        _require_gpu(version)
    resolved = resolve_release(matrix, version, backend, index or open_index(matrix), find_links,
                               refresh=refresh, first_python=first_python)
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
    log(f"Python {resolution.python}: jaxlib {resolution.pins.get('jaxlib', '?')}, "
        f"numpy {resolution.pins.get('numpy', '?')}, scipy {resolution.pins.get('scipy', '?')}")
    try:
        env = ensure_env(matrix.envs_dir, plan, resolution, pick_backend(), log)
    except InstallFailed as exc:
        return Prepared(plan, resolution, None, f"install failed: {exc}", attempts)
    lock_release(matrix, resolved)
    return Prepared(plan, resolution, release_environment(env), "", attempts)


def over_release(prepared: Prepared, history: History, commit: str, version: str, folder: Path) -> Prepared:
    """A JAX commit: its sources laid over a release's prepared environment (same plan, same jaxlib build).

    The Python files go to ``folder``, first on the path (`kit.install.overlay`);
    a release that could not be prepared stays what it was.
    """
    if prepared.environment is None:
        return prepared
    return replace(prepared, environment=lay_over(history, commit, prepared.environment, folder, version))


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
