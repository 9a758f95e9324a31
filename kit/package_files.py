"""Where the kit's own files are: a repository checkout, or a package installed from a wheel.

In a checkout (``nox -s ...``, ``python -m kit``, an editable install) the
repository root holds ``kit/``, ``repro/``, matrix.toml and the catalogue ``known/``,
and a JAX environment's child gets that root on PYTHONPATH, as always. An
installed package lies in a ``site-packages`` full of the kit's own
dependencies (numpy among them, through matplotlib): that folder on a child's
PYTHONPATH would shadow the release's era-correct numpy. So there the child
gets a copy of ``repro/`` laid in the user cache, in a folder that holds it
alone, and nothing is ever written into the installed package (not even the
bytecode the child's imports make).
"""

from __future__ import annotations

import functools
import hashlib
import os
import shutil
import sys
import tempfile
from pathlib import Path

from . import __version__
from .user_cache import cache_dir, tagged

PACKAGE_ROOT = Path(__file__).resolve().parents[1]
"""The folder holding ``kit/`` and ``repro/``: the repository root, or the installed package's site-packages."""

REPRO = PACKAGE_ROOT / "repro"


def in_checkout(root: Path = PACKAGE_ROOT) -> bool:
    """Does the kit run from a repository checkout (its noxfile and matrix.toml beside ``kit/``)?"""
    return (root / "noxfile.py").is_file() and (root / "matrix.toml").is_file()


def default_file(name: str) -> Path:
    """The package's default ``matrix.toml``: the repository's own in a checkout,
    the copy a wheel carries in ``kit/defaults/`` (pyproject.toml) when installed."""
    shipped = Path(__file__).resolve().parent / "defaults" / name
    return shipped if shipped.is_file() else PACKAGE_ROOT / name


def catalogue_folder() -> Path:
    """The package's catalogue: the copy a wheel carries in ``kit/defaults/known``, else the repository's ``known/``."""
    shipped = default_file("known")  # a folder: default_file's is_file() test never picks the wheel's copy
    carried = Path(__file__).resolve().parent / "defaults" / "known"
    return carried if carried.is_dir() else shipped


@functools.lru_cache(maxsize=None)
def repro_root() -> Path:
    """The folder a JAX environment's child gets on PYTHONPATH and runs in: it holds ``repro/``.

    The checkout's root in a checkout; else the copy `lay_repro` keeps in the user cache.
    """
    if in_checkout():
        return PACKAGE_ROOT
    return lay_repro(REPRO, tagged(cache_dir()) / "repro")


def lay_repro(source: Path, folder: Path) -> Path:
    """A folder under ``folder`` holding a copy of the package ``source`` (``repro/``) and nothing else.

    Named for the kit's version and the copied files' content, so an upgraded
    kit gets its own copy and two kits of one version share one. Made in a
    temp folder and renamed into place: a second process laying it at the
    same time finds either no copy or a whole one.
    """
    files = _package_files(source)
    digest = _digest(source, files)
    target = folder / f"{__version__}-{digest[:12]}"
    if (target / source.name / "__init__.py").is_file():
        damaged = _damaged(target / source.name, files, source, digest)
        if not damaged:
            return target
        # A torn or edited copy would crash every check in a way that reads as the release's fault.
        print(f"kit: the kit's own copy of repro/ in {target} was damaged ({damaged}): laying it again",
              file=sys.stderr)
        _set_aside(target)
    folder.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".laying-", dir=folder))
    try:
        for path in files:
            copy = staging / source.name / path.relative_to(source)
            copy.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, copy)
        try:
            os.rename(staging, target)
        except OSError:
            if not (target / source.name / "__init__.py").is_file():  # not another process's whole copy
                raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return target


def _package_files(source: Path) -> list[Path]:
    return sorted(path for path in source.rglob("*") if path.is_file() and "__pycache__" not in path.parts
                  and path.suffix != ".pyc")


def _digest(source: Path, files: list[Path]) -> str:
    digest = hashlib.sha256()
    for path in files:
        digest.update(str(path.relative_to(source)).encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


def _damaged(copy: Path, files: list[Path], source: Path, digest: str) -> str:
    """Why the copy is not the package's files (a file missing, extra, torn or edited), or "" when it is.

    Read whole each time the kit starts a copy's first child (a few hundred kB): cheaper than one check
    crashing for a reason that is the kit's, not the release's.
    """
    try:
        copied = _package_files(copy)
        if [p.relative_to(copy) for p in copied] != [p.relative_to(source) for p in files]:
            return "its files are not the package's"
        if _digest(copy, copied) == digest:
            return ""
        return "changed: " + ", ".join(str(c.relative_to(copy)) for c, f in zip(copied, files)
                                      if c.read_bytes() != f.read_bytes())[:200]
    except OSError as error:
        return f"unreadable: {error.strerror or error}"


def _set_aside(target: Path) -> None:
    """Move a damaged copy out of the way (a child may still be reading it) and remove it."""
    aside = Path(tempfile.mkdtemp(prefix=".damaged-", dir=target.parent))
    try:
        os.rename(target, aside / target.name)
    except OSError:
        pass  # another process moved it first
    shutil.rmtree(aside, ignore_errors=True)
