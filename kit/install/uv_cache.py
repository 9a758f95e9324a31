"""Does uv's cache hold a whole era? Then a resolution from the cache alone is the index's answer.

``uv pip compile`` with ``UV_OFFLINE`` answers from the index pages uv cached
in hundredths of a second, where asking the index took 12 s. Such an answer
is the index's own exactly when every page it read was fetched after the
era's cut-off: then the page lists every file uploaded before it, and the
cut-off hides everything uploaded since. uv rewrites a page's cache file each
time it fetches or revalidates it, so the file's modification time is when
the page was last read from the index.

Only PyPI's pages are judged (uv files them under ``simple-v*/pypi/``, one per
package, by its canonical name): for another index, extra indexes or
find-links pages the cache's age is not known here, and the index is asked.
"""

from __future__ import annotations

import functools
import os
import subprocess
from datetime import datetime, timezone
from pathlib import Path
from typing import Iterable, Mapping

from packaging.utils import canonicalize_name

from .installer_env import uv_env

PYPI = "https://pypi.org/simple"


def holds_era(index_url: str, other_sources: bool, exclude_newer: str | None, packages: Iterable[str],
              uv: str) -> bool:
    """True when uv's cached PyPI page of every one of ``packages`` was fetched after ``exclude_newer``."""
    if index_url.rstrip("/") != PYPI or other_sources or not exclude_newer:
        return False
    try:
        cutoff = datetime.strptime(exclude_newer, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=timezone.utc).timestamp()
    except ValueError:
        return False
    pages = _pypi_pages(uv)
    if pages is None:
        return False
    for name in packages:
        try:
            if (pages / f"{canonicalize_name(name)}.rkyv").stat().st_mtime <= cutoff:
                return False  # read from the index before the era ended: it may lack some of the era's files
        except OSError:
            return False
    return True


@functools.lru_cache(maxsize=None)
def _pypi_pages(uv: str) -> Path | None:
    """The folder of uv's cached PyPI pages (the newest cache layout there is), or None."""
    root = default_cache_dir() or _asked_cache_dir(uv)
    if root is None or not root.is_dir():
        return None
    layouts = sorted(root.glob("simple-v*/pypi"), key=lambda path: _layout_number(path.parent.name))
    return layouts[-1] if layouts else None


def default_cache_dir(environ: Mapping[str, str] = os.environ) -> Path | None:
    """Where uv keeps its cache by its own rule (``UV_CACHE_DIR``, else the XDG cache folder), if that folder is
    there: no process to start, a tenth of a cold probe's second. The kit's uv calls read no config file
    (``UV_NO_CONFIG``), so no ``cache-dir`` setting can point elsewhere."""
    if environ.get("UV_CACHE_DIR"):
        found = Path(environ["UV_CACHE_DIR"])
    else:
        found = Path(environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "uv"
    return found if found.is_dir() else None


def _asked_cache_dir(uv: str) -> Path | None:
    try:
        proc = subprocess.run([uv, "cache", "dir"], capture_output=True, text=True, timeout=30, env=uv_env())
    except (OSError, subprocess.TimeoutExpired):
        return None
    return Path(proc.stdout.strip()) if proc.returncode == 0 and proc.stdout.strip() else None


def _layout_number(name: str) -> int:
    number = name.removeprefix("simple-v")
    return int(number) if number.isdigit() else -1
