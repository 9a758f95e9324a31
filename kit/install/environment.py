"""How does this run get its Python? One entry point, one value the runner consumes.

`prepare` answers it for every driver (a check session, the matrix, bisect)
and returns `Prepared`: the install plan and resolution the record quotes,
and an `Environment` (the interpreter, the packages installed in it, extra
``PYTHONPATH`` entries, and whether it was built now or reused), or the
reason there is none ("not installable here").

Three ways today, each one more way to make an `Environment`, chosen here, so
the runner never learns where its Python came from:

* a release's environment, era-resolved and built once by
  `kit.install.release` and `kit.install.envs`, reused after that;
* an existing interpreter (``--python``, an ``[[environment]]``;
  `prepare_existing`): ``python`` is the user's, ``versions`` what it has
  installed (read by `kit.install.existing`), ``obtained`` is ``existing``;
  nothing is resolved or installed and no index is asked;
* a JAX commit's sources laid over a built release environment
  (`over_release`, made by `kit.install.overlay`): the built `Environment`
  with the commit's ``jax/`` and a whole ``jaxlib`` package in ``pythonpath``
  (first on the path, so they shadow the installed ones).

A check's extra packages (``requires``: a tuple of requirements in
`kit.requirements`' normal form) are an input here, not a side path: for a
release they are resolved with it under the same era cut-off, and the
requirement set keys the plan, the lock and the environment's folder, so a
check that needs flax gets its own environment and the built-in checks'
environments stay as they are (``Environment.versions`` names each extra
package's version); in an existing interpreter they are only looked for
(`needed_packages`).
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Mapping

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

from ..log_events import Event, Kind, Log, detail
from ..config import Matrix
from ..errors import UsageError
from ..json_types import JsonObject
from ..history.source import History
from ..records import EXISTING, backend_name
from ..requirements import installed_versions, versions_text
from .envs import Env, InstallFailed, ensure_env, pick_backend
from .existing import Interpreter, inspect_interpreter
from .overlay import WITH_JAXLIB, lay_over
from .index import PackageIndex
from .installer_env import ignored_settings_note
from .key import InstallKey
from .plan import InstallPlan, Resolution
from .release import lock_release, open_index, resolve_release


BUILT, REUSED = "built", "reused"

NEEDED = ("jax", "jaxlib", "numpy", "scipy")
"""What every check may import (repro/ runs on these and the standard library): each kit build has them."""
OWN = ("jax", "jaxlib")
"""The release's own packages: an interpreter without them holds no release to check (`not-installable`)."""


@dataclass(frozen=True)
class Environment:
    """The Python a check runs with, and what it has."""

    python: Path
    """The interpreter to start."""
    versions: Mapping[str, str]
    """Installed package versions (jax, jaxlib, numpy, scipy, ...), as the resolver chose them."""
    obtained: str
    """How it was obtained: `BUILT` now, `REUSED` from an earlier build, or `EXISTING` (a user's own, as it is)."""
    pythonpath: tuple[Path, ...] = ()
    """Extra import paths, before the repository root: a commit's sources laid over (`over_release`)."""
    python_version: str | None = None
    """The interpreter's full version (3.13.0) where known without starting it."""

    @property
    def reused(self) -> bool:
        return self.obtained == REUSED

    def isolating_env(self) -> dict[str, str]:
        """What every run in it is told so that it imports what the record names: an environment the kit built
        runs without the caller's PYTHONPATH (a ``jax`` there was imported instead of the release's, and the
        record said the release); a user's own interpreter (`EXISTING`) runs as it is, PYTHONPATH and all."""
        return {} if self.obtained == EXISTING else {"PYTHONPATH": ""}


@dataclass(frozen=True)
class ExistingPython:
    """Run with this interpreter as it is (``--python PATH``, or an ``[[environment]]``'s python)."""

    python: Path
    name: str | None = None
    """The ``[[environment]]`` it is, if it is one."""
    backend: str | None = None
    """``--backend`` as given, None when not: it must agree with what that JAX reports, it changes nothing."""


@dataclass
class Prepared:
    """A release made ready to run a check: an environment, or the reason there is none."""

    plan: InstallPlan | None
    """The install plan; None for an existing interpreter (nothing was planned)."""
    resolution: Resolution | None
    environment: Environment | None
    problem: str = ""
    attempts: list[Resolution] = field(default_factory=list)
    existing: ExistingPython | None = None
    interpreter: Interpreter | None = None
    """What an existing interpreter reported (its packages, its JAX's backend and devices)."""
    backend: str | None = None
    """The backend, where the environment decides it (an existing JAX's own); None: the one asked for."""
    jax: str | None = None
    """The release, where the environment decides it (what an existing interpreter has); None: the one asked for."""
    cannot_test: str = ""
    """Why the environment cannot test the check although it has JAX (a package the check needs is missing):
    the record is `inconclusive` and nothing runs."""


def prepare(matrix: Matrix, version: str, key: InstallKey, log: Log, *, index: PackageIndex | None = None,
            refresh: bool = False, existing: ExistingPython | None = None, check: str = "") -> Prepared:
    """Plan the release as ``key`` asks, pick a Python, and build (or reuse) its environment; or take an existing one.

    ``refresh`` resolves again even where the environment's lock answers;
    ``key.python`` is tried first when resolving (bisect knows it from the
    index's metadata); ``key.requires`` adds a check's extra packages, of the
    release's era, in an environment of their own. With ``existing``,
    `prepare_existing` answers instead (``version``, when given, is what that
    interpreter must have; ``check`` names the check, ``key.requires`` what else
    it must be able to import). ``key.pins`` (``NAME==VERSION``, bisect's
    ``--pin``) are held fixed instead of the era's versions: they are in the
    plan, so in the lock's key and the environment's folder.
    """
    if existing is not None:
        return prepare_existing(matrix, existing, check, log, expected_jax=version or None, requires=key.requires)
    if key.backend == "cuda":
        _require_gpu(version)
    pins = key.pins
    resolved = resolve_release(matrix, version, key, index or open_index(matrix), refresh=refresh)
    plan, resolution, attempts = resolved.plan, resolved.resolution, list(resolved.attempts)
    if resolved.lock is not None:
        log(detail(f"jax {plan.jax}: as locked in {resolved.lock.path} (resolved {resolved.lock.resolved_at}; "
                   "-- --refresh resolves again)"))
    else:
        for note in plan.notes:
            log(note)
        ignored = ignored_settings_note()
        if ignored:
            log(Event(ignored, Kind.WARNING))
        log(detail(f"resolved {', '.join(plan.requirements)} as of {plan.exclude_newer or 'today'}"
                   + (f" (as kept from {resolution.kept}: that era is closed; -- --refresh asks the index again)"
                      if resolution is not None and resolution.kept else "")))
    if resolution is None:
        return Prepared(plan, None, None, resolved.problem, attempts)
    versions = resolution.versions
    extras = versions_text(installed_versions(plan.requires, versions))
    log(detail(f"Python {resolution.python}: jaxlib {versions.get('jaxlib', '?')}, "
               f"numpy {versions.get('numpy', '?')}, scipy {versions.get('scipy', '?')}"
               + (f"; requires: {extras}" if extras else "")
               + (f"; holding {', '.join(pins)}" if pins else "")))
    try:
        env = ensure_env(matrix.envs_dir, plan, resolution, pick_backend(), log)
    except InstallFailed as exc:
        return Prepared(plan, resolution, None, f"install failed: {exc}", attempts)
    lock_release(matrix, resolved)
    return Prepared(plan, resolution, release_environment(env), "", attempts)


def over_release(prepared: Prepared, history: History, commit: str, version: str, folder: Path,
                 laid: str = WITH_JAXLIB, minimum: str | None = None) -> Prepared:
    """A JAX commit: its sources laid over a release's prepared environment (same plan, same jaxlib build).

    The Python files go to ``folder``, first on the path (`kit.install.overlay`);
    a release that could not be prepared stays what it was.
    """
    if prepared.environment is None:
        return prepared
    lay_over(history, commit, prepared.environment.python, folder, version, laid, minimum)
    return replace(prepared, environment=overlaid(prepared.environment, folder, version))


def overlaid(environment: Environment, folder: Path, version: str) -> Environment:
    """``environment`` with the overlay in ``folder`` first on its path, its jax named as the commit's ``version``."""
    return replace(environment, versions={**environment.versions, "jax": version},
                   pythonpath=(folder, *environment.pythonpath))


def release_environment(env: Env) -> Environment:
    """A release's built environment as the runner consumes it."""
    return Environment(python=env.python, versions=dict(env.versions), obtained=REUSED if env.reused else BUILT,
                       python_version=env.python_version())


def prepare_existing(matrix: Matrix, existing: ExistingPython, check: str, log: Log,
                     expected_jax: str | None = None, requires: tuple[str, ...] = ()) -> Prepared:
    """An interpreter as it is: what it has, said before anything runs; nothing resolved, installed or asked.

    The backend is what its JAX reports (a ``--backend`` that disagrees is
    refused; no nvidia-smi guard: nothing is downloaded). Without jax or
    jaxlib there is no release to check (`Prepared.problem`, a
    `not-installable` record); without another package the check needs,
    `Prepared.cannot_test` says which (an `inconclusive` record). Bad input
    (not an interpreter, a release or backend other than asked) is `UsageError`.
    """
    interpreter = inspect_interpreter(existing.python)
    needed = needed_packages(requires)  # the check's own, and any --requires, as the runner merged them
    log(f"{existing.python}: Python {interpreter.python_version}, used as it is "
        "(nothing is resolved or installed, no index is asked)")
    log(f"found {interpreter.versions(needed)}; {interpreter.report()}; "
        f"{len(interpreter.packages)} packages, fingerprint {interpreter.fingerprint}")
    found = interpreter.packages.get("jax")
    _must_hold(existing.python, found, expected_jax, check)
    backend = _existing_backend(existing, interpreter)
    environment = Environment(python=existing.python, versions=dict(interpreter.packages), obtained=EXISTING,
                              python_version=interpreter.python_version)
    prepared = Prepared(None, None, environment, existing=existing, interpreter=interpreter, backend=backend,
                        jax=found or expected_jax)
    missing = [name for name in needed if name not in interpreter.packages]
    if not missing:
        return prepared
    there = ", ".join(f"{name} {interpreter.packages[name]}" for name in needed if name in interpreter.packages)
    has = f" ({there} {'is' if len(needed) - len(missing) == 1 else 'are'} there)" if there else ""
    if any(name in OWN for name in missing):
        prepared.environment = None
        prepared.problem = (f"{existing.python} has no {' or '.join(n for n in missing if n in OWN)} installed{has}, "
                            "so it holds no JAX release to check; install one there, or run without --python "
                            "to let the kit build a release")
        return prepared
    prepared.cannot_test = (f"{existing.python} has no {', '.join(missing)} installed{has}, which the {check or 'check'} "
                            f"check needs; install it there, or run without --python for the kit's own build of "
                            f"jax {found}")
    return prepared


def needed_packages(requires: tuple[str, ...]) -> tuple[str, ...]:
    """What a check must be able to import: `NEEDED`, then its ``requires`` by name (looked for, never installed)."""
    names = list(NEEDED)
    for requirement in requires:
        try:
            name = canonicalize_name(Requirement(str(requirement)).name)
        except InvalidRequirement:
            name = canonicalize_name(str(requirement))
        if name not in names:
            names.append(name)
    return tuple(names)


def _must_hold(python: Path, found: str | None, expected: str | None, check: str) -> None:
    """A release named with ``--python`` (``nox -s scaling-0.4.35 -- --python P``) must be the one installed there."""
    if expected is None or found is None:
        return
    try:
        same = Version(found) == Version(expected)
    except InvalidVersion:
        same = found == expected
    if not same:
        raise UsageError(f"{python} has jax {found}, not {expected}",
                         f"with --python the release is whatever is installed there: "
                         f"python -m kit run {check or 'CHECK'} --python {python}")


def _existing_backend(existing: ExistingPython, interpreter: Interpreter) -> str:
    """What that JAX reports; a ``--backend`` that disagrees is refused, one that cannot be checked is taken."""
    reported, asked = interpreter.backend, existing.backend
    if asked is not None and reported is not None and backend_name(asked) != backend_name(reported):
        raise UsageError(f"the JAX in {existing.python} runs on {reported}, not {asked}: --backend cannot change "
                         "an existing installation",
                         f"drop --backend (the backend is the one that JAX reports), or point --python at a JAX "
                         f"built for {asked}")
    return reported or asked or "unknown"


def install_facts(prepared: Prepared) -> JsonObject:
    """The record's ``install`` (the JSON object it writes): how the environment was obtained, and what it holds.

    A release's: the plan, what the resolver chose and whether the environment
    was reused. An existing interpreter's: ``environment: existing``, the
    interpreter, its ``[[environment]]`` name, every installed package and their
    `kit.records.packages_fingerprint`.
    """
    env = prepared.environment
    if prepared.interpreter is not None and prepared.existing is not None:
        interpreter = prepared.interpreter
        return {"environment": EXISTING, "interpreter": str(prepared.existing.python), "name": prepared.existing.name,
                "python": interpreter.python_version, "packages": dict(interpreter.packages),
                "packages_fingerprint": interpreter.fingerprint,
                "jax_report": interpreter.report()}
    plan, resolution = prepared.plan, prepared.resolution
    return {
        "environment": env.obtained if env else None,
        "python": resolution.python if resolution else None,
        "requirements": list(plan.requirements) if plan else [],
        "exclude_newer": plan.exclude_newer if plan else None,
        "find_links": list(plan.find_links) if plan else [],
        "resolved": dict(resolution.versions) if resolution else {},
        "tried_pythons": [a.python for a in prepared.attempts],
        "env_reused": env.reused if env else None,
        **({"requires": list(plan.requires)} if plan and plan.requires else {}),
    }


def _require_gpu(version: str) -> None:
    if not shutil.which("nvidia-smi") and not os.environ.get("KIT_ALLOW_NO_GPU"):
        raise UsageError(
            "no NVIDIA GPU is visible here (nvidia-smi not found), so --backend cuda would download "
            "gigabytes of CUDA wheels and then run on the CPU",
            f"check the install plan without downloading: nox -s plan -- {version} --backend cuda "
            "(set KIT_ALLOW_NO_GPU=1 to install anyway)",
        )
