"""Bytecode for a commit's overlay, compiled once per distinct source file, not once per probe.

Every commit probe lays JAX's Python out afresh in a new folder, so the
check's ``import jax`` found no bytecode and compiled all of it: about 4.5 s
of a 17 s scaling probe on this machine kind (with ``PYTHONDONTWRITEBYTECODE``
set, as here, Python writes none; without it, the pycs it writes go with the
folder). Neighbouring commits share nearly every file, so the bytecode is
kept in a cache under ``.nox/`` filed by the hash of each file's source and
copied into the next overlay: a commit pays only for the files it changed.

The release environment under the overlay gets the same once: the packages
jax imports (jaxlib's Python, numpy, scipy.linalg, ...) were compiled at
every probe too, another 1.5 s, since the kit's installer (uv) writes no
bytecode. :func:`compile_environment` writes it into the environment's own
``__pycache__`` folders, as pip would have at install time; a second call
finds it current and costs a fraction of a second. A release's own runs
(no overlay) keep the bytecode their imports compile instead
(:func:`release_bytecode_env`).

The compiling is done by the environment's own interpreter
(:mod:`kit.install.bytecode_child`), because bytecode belongs to one Python
version. Nothing here changes what runs: the entries are checked-hash pycs
that Python validates against the source on import, each filed with a hash of
its whole content that is checked before it is copied (a torn or overwritten
entry is dropped and compiled again, not imported into "bad marshal data"),
and a failure here only costs the time it was meant to save.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from ..records import EXISTING
from .environment import Environment
from .overlay import installed_package

_CHILD = Path(__file__).with_name("bytecode_child.py")
COMPILE_TIMEOUT_S = 300.0  # JAX's ~600 files compile in about 6 s here; a slow disk or a loaded node gets room


@dataclass(frozen=True)
class Bytecode:
    """What :func:`fill_bytecode` did: files copied from the cache, compiled now, failed, cache entries found bad
    (or why it could not run)."""

    copied: int = 0
    compiled: int = 0
    failed: int = 0
    dropped: int = 0
    problem: str = ""

    def __str__(self) -> str:
        if self.problem:
            return f"no bytecode prepared ({self.problem}); the import compiles it"
        return f"bytecode: {self.copied} files from the cache, {self.compiled} compiled now" + (
            f", {self.failed} left to the import" if self.failed else "") + (
            f" ({self.dropped} of them over cache entries that were damaged, dropped)" if self.dropped else "")


def fill_bytecode(python: Path, folder: Path, cache: Path) -> Bytecode:
    """Give every source file of ``folder`` its bytecode for ``python``, from ``cache`` where it has it."""
    try:
        done = subprocess.run([str(python), str(_CHILD), str(cache.absolute()), str(folder)], capture_output=True,
                              text=True, timeout=COMPILE_TIMEOUT_S, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.SubprocessError) as exc:
        return Bytecode(problem=f"{type(exc).__name__}: {exc}")
    counts = done.stdout.split()
    if done.returncode != 0 or len(counts) != 4 or not all(count.isdigit() for count in counts):
        last = (done.stderr.strip().splitlines() or [f"exit code {done.returncode}"])[-1]
        return Bytecode(problem=last[:200])
    copied, compiled, failed, dropped = (int(count) for count in counts)
    return Bytecode(copied, compiled, failed, dropped)


def compile_environment(python: Path) -> str:
    """Bytecode for the packages of a built environment that commits are laid over, where it is missing or stale;
    what was done, for the log.

    Tests folders are left out (no check imports them: half of scipy's files),
    and so is the ``jax`` package, which every overlay hides behind its own.
    """
    try:
        site_packages = installed_package(python, "jaxlib").parent  # where the environment's packages are
        skip = rf"/tests?/|^{re.escape(str(site_packages / 'jax'))}/"
        # -j 0: one worker per core; a cold build's first run waits on this (2.8 s -> 2.0 s here for jax 0.5.x).
        done = subprocess.run([str(python), "-m", "compileall", "-q", "-j", "0", "-x", skip, str(site_packages)],
                              capture_output=True, text=True, timeout=COMPILE_TIMEOUT_S, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.SubprocessError) as exc:
        return f"no bytecode written ({type(exc).__name__}: {exc}); each import compiles it"
    if done.returncode != 0:  # a file that does not compile: the rest was written, and an import of it says why
        last = (done.stdout.strip().splitlines() or done.stderr.strip().splitlines() or ["?"])[-1]
        return f"bytecode written, but compileall failed on a file: {last[:200]}"
    return "bytecode for its packages in place"


PYCACHE = ".kit-pycache"
"""In a built environment's folder: the bytecode its own runs wrote, for exactly the modules they imported."""


def release_bytecode_env(env: Environment) -> dict[str, str]:
    """What a run in a release environment the kit built is told so that its imports keep their bytecode; {} for
    a user's own interpreter (used as it is) and for a commit's overlay (it brings its own, `fill_bytecode`).

    uv writes no bytecode, and where ``PYTHONDONTWRITEBYTECODE`` is set (as
    on this machine kind) Python writes none either, so every ``import jax``
    compiled its ~450 modules again: 1.5 of a warm session's seconds here.
    Compiling the whole environment once after the build (``compileall``, as
    pip does) cost a cold probe 3.6 s for files no check imports (most of
    scipy); letting the run write what it compiles costs nothing extra. The
    bytecode goes under the environment's own folder (``PYTHONPYCACHEPREFIX``)
    so that nothing is written beside the kit's or a user's sources, and it goes
    with the environment when that is deleted. Python validates each pyc
    against its source's time stamp and writes atomically, so runs side by side
    are safe, and a read-only environment only costs the time this saves.
    """
    root = env.python.parent.parent  # <environment>/bin/python
    if env.obtained == EXISTING or env.pythonpath or not (root / "pyvenv.cfg").is_file():
        return {}
    return bytecode_kept_under(root / PYCACHE)


def bytecode_kept_under(folder: Path) -> dict[str, str]:
    """The variables that make a Python write the bytecode of what it imports, and read it back, under ``folder``
    whether or not the caller's environment sets ``PYTHONDONTWRITEBYTECODE`` (noxfile.py keeps the tests' there)."""
    # An empty PYTHONDONTWRITEBYTECODE is unset as far as Python is concerned (the variable needs a non-empty value).
    return {"PYTHONDONTWRITEBYTECODE": "", "PYTHONPYCACHEPREFIX": str(folder.absolute())}


# What an import of a damaged pyc dies of: Python checks a pyc's header against its source, not the code after it.
_DAMAGED = ("bad marshal data", "marshal data too short")


def drop_damaged_bytecode(env: Environment, error: str) -> bool:
    """Remove a release environment's kept bytecode when ``error`` (what its ``import jax`` died of) says a pyc
    there is damaged; whether it did. Python writes each pyc whole (a temporary file, then a rename), so only
    something outside it tears one; the bytecode is only a cache, so the next import compiles afresh."""
    kept = env.python.parent.parent / PYCACHE
    if not release_bytecode_env(env) or not any(mark in error for mark in _DAMAGED) or not kept.is_dir():
        return False
    shutil.rmtree(kept, ignore_errors=True)
    return not kept.exists()
