"""The one folder every project on this machine shares for what the ``jax-kit`` command rebuilds at will.

Release environments and their locks, the probe cache, runnable pairs, JAX's
history clone and the copy of ``repro/`` that JAX environments import all
live under it, so a second project asking for jax 0.6.0 reuses the first
one's environment (the kit's per-environment file locks keep two builders
apart). It is the platform's cache folder, or ``JAX_KIT_CACHE`` where that is
set; the repository's own sessions keep using ``.nox/`` beside matrix.toml.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Mapping

VARIABLE = "JAX_KIT_CACHE"
"""The environment variable that names the cache folder instead of the platform's."""

_TAG = ("Signature: 8a477f597d28d172789f06886806bc55\n"
        "# This folder is jax-kit's cache (release environments, probes): rebuilt at will, not worth a backup.\n")


def cache_dir(environ: Mapping[str, str] | None = None, platform: str | None = None) -> Path:
    """``$JAX_KIT_CACHE``, else the platform's cache folder with ``jax-kit`` in it (absolute, not made yet)."""
    environ = os.environ if environ is None else environ
    platform = platform or sys.platform
    given = environ.get(VARIABLE, "")
    if given:
        return Path(os.path.abspath(os.path.expanduser(given)))
    if platform.startswith("win"):
        base = environ.get("LOCALAPPDATA") or str(Path.home() / "AppData" / "Local")
        return Path(base) / "jax-kit" / "Cache"
    if platform == "darwin":
        return Path.home() / "Library" / "Caches" / "jax-kit"
    xdg = environ.get("XDG_CACHE_HOME", "")
    # The XDG spec: a relative XDG_CACHE_HOME is invalid and ignored.
    return (Path(xdg) if os.path.isabs(xdg) else Path.home() / ".cache") / "jax-kit"


def tagged(folder: Path) -> Path:
    """``folder``, made where it is missing, with a CACHEDIR.TAG so backup tools skip it; OSError if it cannot be."""
    folder.mkdir(parents=True, exist_ok=True)
    tag = folder / "CACHEDIR.TAG"
    if not tag.exists():
        tag.write_text(_TAG, encoding="utf-8")
    return folder
