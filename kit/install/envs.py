"""One environment per (release, backend, python), behind a small interface.

uv is the default: it resolves with an era cut-off (``--exclude-newer``) and
installs from a shared cache in seconds. Where uv is missing, plain virtualenv
(or the standard venv) plus pip does the same job, slower, with the versions uv
would have chosen replaced by era constraints computed from the index.
"""

from __future__ import annotations

import contextlib
import glob
import json
import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from contextlib import contextmanager
from typing import Callable, Iterator, Mapping, Protocol

from filelock import FileLock, Timeout

from ..log_events import Log, detail
from ..atomic_files import atomic_write_text
from ..errors import IndexUnreachable, MachineUnwritable, StorageError, UsageError
from ..requirements import package_name
from .installed import missing_from
from .installer_env import uv_env
from .plan import InstallPlan, Resolution, find_uv
from .uv_errors import raise_if_network_trouble, raise_if_offline_cache_gap
from .uv_failures import WRITE_ERRNOS, raise_if_this_machine, unwritable


_MARKER = "kit-env.json"


@dataclass(frozen=True)
class Env:
    path: Path
    python: Path
    reused: bool
    versions: dict[str, str]
    """Every package installed and its version, as resolved (`Resolution.versions`)."""

    def python_version(self) -> str | None:
        """The interpreter's full version (3.13.0), as the venv recorded it: no process to start.

        The plan only knows the minor version; the built-in repros report the
        full one, and a script check's record should say the same.
        """
        try:
            lines = (self.path / "pyvenv.cfg").read_text(encoding="utf-8").splitlines()
        except OSError:
            return None
        found = dict(line.split("=", 1) for line in lines if "=" in line)
        found = {key.strip(): value.strip() for key, value in found.items()}
        return found.get("version_info") or found.get("version") or None


class InstallFailed(Exception):
    """The installer ran and failed; the message is its last words."""


class EnvBackend(Protocol):
    name: str

    def create(self, path: Path, interpreter: Path) -> None: ...

    def install(self, path: Path, plan: InstallPlan, resolution: Resolution) -> None: ...


class UvBackend:
    name = "uv"

    def __init__(self, uv: str) -> None:
        self.uv = uv

    def create(self, path: Path, interpreter: Path) -> None:
        _run([self.uv, "venv", "--quiet", "--python", str(interpreter), str(path)], path)

    def install(self, path: Path, plan: InstallPlan, resolution: Resolution) -> None:
        # Install exactly the versions resolved, so the record's versions
        # are the versions that ran.
        exact = [f"{name}=={version}" for name, version in sorted(resolution.versions.items())]
        command = [self.uv, "pip", "install", "--python", str(env_python(path)), *plan.uv_args()]
        if resolution.versions and all(resolution.hashes.get(name) for name in resolution.versions):
            # The lock's hashes too: a wheel that changed since it was resolved is refused.
            locked = path / "kit-requirements.txt"
            atomic_write_text(locked, "".join(f"{pin} " + " ".join(f"--hash={h}" for h in resolution.hashes[pin.split('==')[0]])
                                              + "\n" for pin in exact))
            _run([*command, "--require-hashes", "-r", str(locked)], path)
        else:
            _run([*command, *exact], path)


class VirtualenvBackend:
    name = "virtualenv"

    def create(self, path: Path, interpreter: Path) -> None:
        if shutil.which("virtualenv"):
            _run(["virtualenv", "--quiet", "-p", str(interpreter), str(path)], path)
        else:
            _run([str(interpreter), "-m", "venv", str(path)], path)

    def install(self, path: Path, plan: InstallPlan, resolution: Resolution) -> None:
        exact = [f"{name}=={version}" for name, version in sorted(resolution.versions.items())]
        args = plan.source_args()
        if plan.requires:
            args += ["--only-binary", ":all:"]  # as resolved (InstallPlan.uv_args): no sdist builds
        _run([str(env_python(path)), "-m", "pip", "install", "--quiet", *args, *exact], path)


def pick_backend() -> EnvBackend:
    """uv when present, virtualenv otherwise (or as KIT_VENV_BACKEND says)."""
    if os.environ.get("KIT_VENV_BACKEND") == "virtualenv":
        return VirtualenvBackend()
    try:
        return UvBackend(find_uv())
    except UsageError:
        return VirtualenvBackend()


def ensure_env(envs_dir: Path, plan: InstallPlan, resolution: Resolution, backend: EnvBackend,
               log: Log) -> Env:
    """Reuse the environment built from this exact plan, or build it (one builder at a time)."""
    path = env_path(envs_dir, plan, resolution)
    built = _finished_env(path, log, resolution.versions)
    if built is not None:
        return built
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise _unwritable_or(exc, path) from None
    with _build_lock(path, log) as waited_since:
        built = finished_env(path)  # another process may have built it while we waited
        if built is not None and not _other_versions(built, resolution.versions):
            log(detail(f"reusing environment {path}"))
            return built
        if waited_since is not None:
            _raise_if_it_failed(path, waited_since, log)
        interpreter = find_or_fetch_interpreter(resolution.python, log)
        if path.exists():
            # Half-built by a run that was interrupted: with the lock held, no one else is building it.
            shutil.rmtree(path)
        log(f"creating environment {path} ({backend.name}, Python {resolution.python})")
        try:
            _build(path, plan, resolution, backend, interpreter, log)
        except BaseException as exc:
            # A half-built environment is litter (85 MB of it after a full disk) that no run can use.
            shutil.rmtree(path, ignore_errors=True)
            _note_failure(path, exc)
            raise
        _failure_note(path).unlink(missing_ok=True)
    return Env(path=path, python=env_python(path), reused=False, versions=dict(resolution.versions))


def _unwritable_or(exc: OSError, path: Path) -> Exception:
    """The environment folder refused ``exc``'s write: `MachineUnwritable` naming it; any other error as it is."""
    if exc.errno not in WRITE_ERRNOS:
        return exc
    return unwritable(os.strerror(exc.errno), Path(exc.filename) if exc.filename else None, path)


def _build(path: Path, plan: InstallPlan, resolution: Resolution, backend: EnvBackend, interpreter: Path,
           log: Log) -> None:
    try:
        backend.create(path, interpreter)
        log("installing " + ", ".join(f"{k}=={v}" for k, v in sorted(resolution.versions.items())))
        backend.install(path, plan, resolution)
        # The marker is written last: its presence means the install finished.
        atomic_write_text(path / _MARKER, json.dumps({"plan": plan.to_json(), "python": resolution.python,
                                                      "versions": resolution.versions}, indent=2))
    except OSError as exc:  # the kit's own writes into the folder (the lock's hashes, the marker)
        raise _unwritable_or(exc, path) from None


def env_path(envs_dir: Path, plan: InstallPlan, resolution: Resolution) -> Path:
    """Where the environment of this exact plan and resolution lives (built or not)."""
    # The plan's fingerprint keys the folder (a check's extra packages change it); their names are
    # only there for a person listing the folders.
    extras = "-with-" + "+".join(sorted({package_name(text) for text in plan.requires}))[:60] if plan.requires else ""
    name = f"jax-{plan.jax}-{plan.backend}-py{resolution.python}{extras}-{plan.fingerprint(resolution.python)}"
    return _inside(envs_dir.resolve(), name)


def _inside(folder: Path, name: str) -> Path:
    """``folder / name``, refused when something put there leads elsewhere: the kit rebuilds (deletes) an
    environment there and locks beside it, so a link (or a path resolving outside ``folder``) would have its
    target deleted. The folder itself may be a link (a shared ``.nox/jax-envs``): it is resolved first."""
    path = folder / name
    for where in (path, path.with_name(name + ".lock")):  # opening the lock truncates what a link there names
        target = where.resolve()
        if where.is_symlink() or target.parent != folder:
            raise StorageError(f"the environment path {where} leads outside {folder} (to {target}): the kit builds, "
                               "rebuilds and deletes environments only inside that folder, so it touched nothing there",
                               f"remove the link (rm {where}) and run again: the environment is then built in its place")
    return path


def finished_env(path: Path) -> Env | None:
    """The environment at ``path`` if its install finished and it still holds what it installed; None otherwise."""
    built = _marked_env(path)
    if built is None or missing_from(path, built.versions):
        return None
    return built


def _marked_env(path: Path) -> Env | None:
    """The environment at ``path`` if its install finished (its marker is written last); None otherwise."""
    try:
        saved = json.loads((path / _MARKER).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    # A marker written before the resolved versions were called ``versions`` names them ``pins``: its
    # environment is as finished as any.
    versions = saved.get("versions", saved.get("pins")) if isinstance(saved, dict) else None
    if not env_python(path).exists() or not isinstance(versions, dict):
        return None
    return Env(path=path, python=env_python(path), reused=True, versions=versions)


def _other_versions(built: Env, wanted: Mapping[str, str]) -> list[str]:
    """What ``built`` installed otherwise than ``wanted`` says (``optax 0.2.3, now 0.2.4``): the folder is named by
    the plan alone, so a lock resolved again (``--refresh``, a cache answer found wrong) can name other versions."""
    return [f"{name} {built.versions.get(name)}, now {version}" for name, version in sorted(wanted.items())
            if built.versions.get(name) != version]


def _finished_env(path: Path, log: Log, wanted: Mapping[str, str]) -> Env | None:
    """`finished_env`, saying which it is: reused, or damaged since it was built, or built with other versions
    than the resolution names (then it is built again)."""
    built = _marked_env(path)
    if built is None:
        return None
    other = _other_versions(built, wanted)
    if other:
        log(f"environment {path} holds other versions than its resolution ({', '.join(other[:5])}): building it again")
        return None
    damage = missing_from(path, built.versions)
    if damage:
        # A verdict from it would blame the release for what was removed here ("No module named 'jax'").
        log(f"environment {path} no longer holds what it installed ({damage}): building it again")
        return None
    log(detail(f"reusing environment {path}"))
    return built


@contextmanager
def _build_lock(path: Path, log: Log) -> Iterator[float | None]:
    """Hold ``<env>.lock`` while building: a second builder waits (and says so), then reuses.

    An OS lock on every platform (flock; msvcrt on Windows), which the OS
    drops when its holder dies, so a killed build never blocks the next one.
    Yields when the wait began (None: there was none).
    """
    lock = FileLock(path.with_name(path.name + ".lock"))
    waited_since = None
    try:
        lock.acquire(timeout=0)
    except Timeout:  # (a TimeoutError, so an OSError: asked first)
        waited_since = time.time()
        log(f"waiting for another process that is building {path.name} ...")
        lock.acquire()
        log(f"the other build of {path.name} finished")
    except OSError as exc:  # the lock file is the first thing written there: a read-only or full folder
        raise _unwritable_or(exc, path) from None
    try:
        yield waited_since
    finally:
        lock.release()


# A build that failed on this machine's network or disk, or on the installer, says so beside its lock: a builder that
# waited for it meets the same answer at once, instead of asking the network again for as long (a minute of uv retrying).
_NOTED: dict[str, Callable[[str, str], Exception]] = {
    "IndexUnreachable": IndexUnreachable, "MachineUnwritable": MachineUnwritable,
    "InstallFailed": lambda message, _tip: InstallFailed(message)}


def _failure_note(path: Path) -> Path:
    return path.with_name(path.name + ".failed.json")


def _note_failure(path: Path, exc: BaseException) -> None:
    kind = type(exc).__name__
    if kind not in _NOTED:
        return  # Ctrl-C, a bug: nothing a waiter should take as its answer
    note = {"kind": kind, "message": str(exc), "tip": getattr(exc, "tip", ""), "at": time.time()}
    with contextlib.suppress(OSError):  # a full disk may refuse the note too: the waiter then builds itself
        atomic_write_text(_failure_note(path), json.dumps(note))


def _raise_if_it_failed(path: Path, waited_since: float, log: Log) -> None:
    """The failure of the build this one waited for, raised again; nothing when it failed before the wait began."""
    try:
        note = json.loads(_failure_note(path).read_text(encoding="utf-8"))
        kind, message, tip, at = note["kind"], str(note["message"]), str(note["tip"]), float(note["at"])
    except (OSError, ValueError, TypeError, KeyError):
        return
    if kind in _NOTED and at >= waited_since:
        log(f"the other build of {path.name} failed: {message}; not trying again now")
        raise _NOTED[kind](message, tip)


def env_python(path: Path) -> Path:
    return path / ("Scripts/python.exe" if sys.platform == "win32" else "bin/python")


def available_pythons(wanted: tuple[str, ...]) -> list[str]:
    return [py for py in wanted if find_interpreter(py) is not None]


def find_interpreter(version: str) -> Path | None:
    """An installed CPython ``version`` (e.g. "3.12"): pyenv's first, then PATH."""
    root = Path(os.environ.get("PYENV_ROOT", Path.home() / ".pyenv"))
    # The glob's "3.12." prefix already pins the minor version; the newest patch release wins.
    found_here = glob.glob(str(root / "versions" / f"{version}.*" / "bin" / "python"))
    for candidate in sorted(found_here, key=_patch_number, reverse=True):
        if os.access(candidate, os.X_OK):
            return Path(candidate)
    found = shutil.which(f"python{version}")
    if found:
        return Path(found)
    return None


# uv downloads a managed Python in well under a minute where it can reach its
# source at all; where it cannot, it retries for about twenty seconds.
UV_PYTHON_INSTALL_TIMEOUT_S = 300


def find_or_fetch_interpreter(version: str, log: Log) -> Path:
    """An interpreter for ``version``: installed (pyenv, PATH), uv-managed, or downloaded by uv.

    Raises `InstallFailed` naming the Python and the command that supplies it
    when none is installed and uv cannot download one.
    """
    found = find_interpreter(version)
    if found is not None:
        return found
    supply = f"install it with `uv python install {version}` or `pyenv install {version}`, then run again"
    try:
        uv = find_uv()
    except UsageError:
        raise InstallFailed(f"this release needs Python {version}, which is not installed here; {supply}") from None
    found = _uv_python_find(uv, version)
    if found is not None:
        return found
    log(f"Python {version} is not installed here; asking uv for a managed one (uv python install {version})")
    try:
        proc = subprocess.run([uv, "python", "install", version], capture_output=True, text=True,
                              env=uv_env(), timeout=UV_PYTHON_INSTALL_TIMEOUT_S)
        failure = "" if proc.returncode == 0 else _last_cause(proc.stderr)
        if failure:
            _raise_if_not_the_release(version, proc.stderr)
    except subprocess.TimeoutExpired:
        failure = f"no download within {UV_PYTHON_INSTALL_TIMEOUT_S} s"
    found = None if failure else _uv_python_find(uv, version)
    if found is None:
        raise InstallFailed(f"this release needs Python {version}, which is not installed here, and uv could not "
                            f"download it ({failure or 'not found after install'}); {supply}")
    return found


def _raise_if_not_the_release(version: str, stderr: str) -> None:
    """A managed Python that did not come down because of this machine (a full or read-only folder) or the network
    (out of reach, cut off): no answer about the release, so no record (was: `not-installable`)."""
    try:
        raise_if_this_machine(stderr)
        raise_if_network_trouble(stderr)
        raise_if_offline_cache_gap(stderr)
    except IndexUnreachable as exc:
        raise IndexUnreachable(f"this release needs Python {version}, which is not installed here, and uv could not "
                               f"download it over the network ({_last_cause(stderr)})", exc.tip) from None


def _uv_python_find(uv: str, version: str) -> Path | None:
    proc = subprocess.run([uv, "python", "find", version], capture_output=True, text=True, env=uv_env())
    found = proc.stdout.strip().splitlines()
    return Path(found[-1]) if proc.returncode == 0 and found and Path(found[-1]).exists() else None


def _last_cause(stderr: str) -> str:
    lines = [ln.strip() for ln in stderr.splitlines() if ln.strip()]
    causes = [ln[len("cause:"):].strip() for ln in lines if ln.startswith("cause:")]
    return (causes or lines or ["uv gave no reason"])[-1]


def _patch_number(python: str) -> int:
    """3.11.10 -> 10 for ``.../versions/3.11.10/bin/python`` (pre-releases and odd names sort first)."""
    patch = Path(python).parent.parent.name.split(".")[2:3]
    return int(patch[0]) if patch and patch[0].isdigit() else -1


def _run(cmd: list[str], folder: Path | None = None) -> None:
    """Run one step of building the environment in ``folder``; its failure as the release's, unless it is this
    machine's (a cut download, a full or read-only folder: `kit.install.uv_failures`) or the network's."""
    proc = subprocess.run(cmd, capture_output=True, text=True, env=uv_env())
    if proc.returncode != 0:
        raise_if_this_machine(proc.stderr or proc.stdout, folder)
        raise_if_network_trouble(proc.stderr)  # a download cut off says nothing about the release
        raise_if_offline_cache_gap(proc.stderr)
        tail = (proc.stderr or proc.stdout).strip().splitlines()[-12:]
        raise InstallFailed("\n".join(tail) or f"{cmd[0]} exited with {proc.returncode}")
