"""Does a finished environment still hold what its lock names? Checked before each reuse, in milliseconds.

The marker (`kit.install.envs`) says the install finished once; it cannot say
that nothing was removed since. An environment missing its ``jax`` folder runs
``import jax`` into "No module named 'jax'", and that would read as a verdict
about the release. So before reuse each pinned package must still have its
``<name>-<version>.dist-info`` folder in site-packages, and every top-level
entry its RECORD lists (``jax/``, ``numpy.libs/``, ``six.py``) must be there.
Only names are looked up (one listing of site-packages, one stat per top-level
entry): no file is read but the RECORDs, nothing is imported.
"""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Mapping

from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version


def missing_from(env: Path, versions: Mapping[str, str]) -> str:
    """What of ``versions`` is not installed in the environment at ``env``, in a few words; "" when all is there."""
    sites = site_packages(env)
    if not sites:
        return "it has no site-packages folder" if versions else ""
    installed = _dist_infos(sites)
    for name, version in sorted(versions.items()):
        found = installed.get((canonicalize_name(name), _version(version)))
        if found is None:
            return f"{name} {version} has no {name}-{version}.dist-info in {_shown(sites[0], env)}"
        for entry in _top_level(found):
            if not (found.parent / entry).exists():
                return f"{_shown(found.parent / entry, env)}, listed in {name} {version}'s RECORD, is missing"
    return ""


def site_packages(env: Path) -> list[Path]:
    """The environment's site-packages folders (a venv has one: lib/pythonX.Y/site-packages, or Lib/ on Windows)."""
    found = sorted(env.glob("lib/python*/site-packages")) + [env / "Lib" / "site-packages"]
    return [folder for folder in found if folder.is_dir()]


def _dist_infos(sites: list[Path]) -> dict[tuple[str, Version | str], Path]:
    """Every ``.dist-info`` folder, by its name and version in their normal forms: one listing per site-packages."""
    found: dict[tuple[str, Version | str], Path] = {}
    for site in sites:
        for entry in site.glob("*.dist-info"):
            name, _, version = entry.name[:-len(".dist-info")].rpartition("-")
            found.setdefault((canonicalize_name(name), _version(version)), entry)
    return found


def _top_level(dist_info: Path) -> list[str]:
    """The top-level entries of site-packages that the distribution's RECORD lists (none without a RECORD)."""
    try:
        with open(dist_info / "RECORD", encoding="utf-8", newline="") as record:
            paths = [row[0] for row in csv.reader(record) if row]
    except (OSError, UnicodeDecodeError, csv.Error):
        return []
    tops = {path.replace("\\", "/").split("/")[0] for path in paths}
    # Scripts (../../bin), the .data of a wheel, bytecode and the dist-info itself are not what it imports.
    return sorted(top for top in tops
                  if top and top not in ("..", "__pycache__") and not top.endswith((".dist-info", ".data")))


def _version(text: str) -> Version | str:
    try:
        return Version(text)
    except InvalidVersion:
        return text


def _shown(path: Path, env: Path) -> str:
    """``path`` as a person finds it: from the environment's site-packages where it is under one."""
    for site in site_packages(env):
        if path.is_relative_to(site):
            return "site-packages/" + path.relative_to(site).as_posix() if path != site else "site-packages"
    return str(path)
