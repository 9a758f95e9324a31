"""Where the kit's own files are: a repository checkout, or a package installed from a wheel.

In a checkout (``nox -s ...``, ``python -m kit``, an editable install) the
repository root holds ``kit/``, ``repro/``, matrix.toml and known_problems.toml,
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
    """The package's default ``matrix.toml`` or ``known_problems.toml``: the repository's own in a checkout,
    the copy a wheel carries in ``kit/defaults/`` (pyproject.toml) when installed."""
    shipped = Path(__file__).resolve().parent / "defaults" / name
    return shipped if shipped.is_file() else PACKAGE_ROOT / name


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
    files = sorted(path for path in source.rglob("*") if path.is_file() and "__pycache__" not in path.parts
                   and path.suffix != ".pyc")
    digest = hashlib.sha256()
    for path in files:
        digest.update(str(path.relative_to(source)).encode() + b"\0" + path.read_bytes() + b"\0")
    target = folder / f"{__version__}-{digest.hexdigest()[:12]}"
    if (target / source.name / "__init__.py").is_file():
        return target
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
