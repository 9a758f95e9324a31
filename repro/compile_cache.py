"""JAX's persistent compilation cache for a check's compiles, where this release and backend have one.

A bisect runs the same check on many commits, and most of them lower to the
same programs: compiling them again is most of a probe. The kit names a
folder in ``KIT_COMPILE_CACHE`` (one per jaxlib build, backend and CPU model,
under ``.nox/``); `enable` points JAX's persistent compilation cache there
with no minimum compile time or size, so the small programs of a check are
kept too. JAX keys each entry by the program itself, the compile options,
the devices, the XLA flags and the jaxlib, so a different program or build
never hits: what is reused is an executable of the very same program, and a
run with reused compiles reads the same HLO as one without
(tests/test_repro_compile_cache.py compares them).

Every setting is feature-detected, never read from a version string: the
config names arrived in different releases (``jax_compilation_cache_dir``
from 0.4.21; before it, ``initialize_cache``), and the CPU backend caches
only from 0.4.28. Whether the cache was used is what JAX reports
itself (its ``/jax/compilation_cache/...`` monitoring events, and the entries
written); a release that compiled without using it says "not supported
here", never a count it did not make.

Standard library and jax only: this runs inside each release's environment.
"""

from __future__ import annotations

import os
import re
import warnings
from typing import Any, Dict, List, Optional

ENV = "KIT_COMPILE_CACHE"
"""The folder the kit names; unset, nothing is cached. Not a JAX variable: it is no part of a run's identity."""

_REQUESTS = "/jax/compilation_cache/compile_requests_use_cache"
_HITS = "/jax/compilation_cache/cache_hits"

# No threshold: a check's programs compile in a fraction of a second, below JAX's default minimum (1 s).
# XLA's own autotuning caches (a GPU's) stay off: only whole executables are reused.
SETTINGS = (("jax_persistent_cache_min_compile_time_secs", 0.0),
             ("jax_persistent_cache_min_entry_size_bytes", -1),
             ("jax_persistent_cache_enable_xla_caches", "none"))


class CompileCache:
    """The cache as this process uses it: asked for or not, and what JAX reported doing with it."""

    def __init__(self, folder: Optional[str], problem: str = "") -> None:
        self.folder = folder
        self.problem = problem
        """Why the cache is not used ("" while it may be)."""
        self.events: List[str] = []
        self.counting = False
        self._entries_before = _entries(folder)
        self.dropped: List[str] = []
        """Entries JAX could not read (torn, overwritten), removed so that this run's compile is kept whole."""

    @classmethod
    def unasked(cls) -> "CompileCache":
        """No folder named: every compile is JAX's own."""
        return cls(None, "not asked for")

    def listen(self, event: str, *args: Any, **kwargs: Any) -> None:
        if event in (_REQUESTS, _HITS):
            self.events.append(event)

    def figures(self) -> Dict[str, Any]:
        """For the record: whether it was used, how many compiles asked it and how many it answered."""
        if self.folder is None:
            return {"used": False, "why": self.problem or "not asked for"}
        written = _entries(self.folder) - self._entries_before + len(self.dropped)
        requests, hits = self.events.count(_REQUESTS), self.events.count(_HITS)
        if self.problem or (requests == 0 and written <= 0):
            why = self.problem or "not supported here: this jax compiled without consulting its persistent cache " \
                                  "on this backend"
            return {"used": False, "why": why}
        damaged = {"dropped_damaged": len(self.dropped)} if self.dropped else {}
        if not self.counting:
            return {"used": True, "compiles": None, "reused": None, "written": written, **damaged}
        return {"used": True, "compiles": requests, "reused": hits, "written": written, **damaged}


def enable(jax: Any, environ: Optional[Dict[str, str]] = None) -> CompileCache:
    """Point JAX's persistent cache at the kit's folder, before anything compiles; what was done.

    Call right after ``import jax``: a compile made before it is not cached.
    """
    folder = (os.environ if environ is None else environ).get(ENV) or None
    if folder is None:
        return CompileCache.unasked()
    cache = CompileCache(folder)
    if not _point_at(jax, folder):
        cache.problem = "not supported here: this jax has no persistent compilation cache to point at a folder"
        return cache
    for name, value in SETTINGS:
        _update(jax, name, value)  # a release without the setting has no such threshold to lift
    cache.counting = _listen(jax, cache)
    _drop_what_jax_cannot_read(cache)
    return cache


# JAX's words when an entry will not load (compiler.py): it compiles again, and then keeps its old entry, since one
# is there; so a damaged entry warned on every run and was never replaced.
UNREADABLE = re.compile(r"Error reading persistent compilation cache entry for '([^']+)'")
"""JAX's warning for an entry it cannot read (torn, overwritten), naming the program."""


def _drop_what_jax_cannot_read(cache: CompileCache) -> None:
    """Remove the entries of a program JAX warns it could not read, as it warns: its compile then writes them whole."""
    shown = warnings.showwarning

    def show(message: Any, category: Any, filename: str, lineno: int, file: Any = None, line: Any = None) -> None:
        unreadable = UNREADABLE.search(str(message))
        if unreadable and cache.folder:
            cache.dropped += remove_entries(cache.folder, unreadable.group(1))
        shown(message, category, filename, lineno, file, line)

    warnings.showwarning = show


def remove_entries(folder: str, program: str) -> List[str]:
    """Every entry of ``program`` (JAX files them as ``<program>-<key>-cache``, and ``-atime`` beside): a bad one
    cannot be told from the good by its name."""
    removed = []
    for name in os.listdir(folder):
        if name.startswith(program + "-"):
            try:
                os.remove(os.path.join(folder, name))
            except OSError:
                continue
            removed.append(name)
    return removed


def summary(figures: Dict[str, Any]) -> str:
    """One line: ``compile cache: 12 of 14 compiles reused`` or why it was not used."""
    if not figures.get("used"):
        return f"compile cache: {figures.get('why')}"
    dropped = (f"; {figures['dropped_damaged']} damaged entries dropped and written again"
               if figures.get("dropped_damaged") else "")
    if figures.get("compiles") is None:
        return (f"compile cache: used ({figures.get('written')} entries written; this jax does not count reuse)"
                f"{dropped}")
    return f"compile cache: {figures['reused']} of {figures['compiles']} compiles reused{dropped}"


def _point_at(jax: Any, folder: str) -> bool:
    os.makedirs(folder, exist_ok=True)
    if _update(jax, "jax_compilation_cache_dir", folder):
        return True
    try:  # releases before the config option: the cache's own initialiser
        from jax.experimental.compilation_cache import compilation_cache
    except ImportError:
        return False
    initialize = getattr(compilation_cache, "initialize_cache", None)
    if initialize is None:
        return False
    initialize(folder)
    return True


def _update(jax: Any, name: str, value: Any) -> bool:
    """Set a config option if this release has it; False when it does not."""
    try:
        jax.config.update(name, value)
    except (AttributeError, KeyError, ValueError, TypeError):
        return False
    return True


def _listen(jax: Any, cache: CompileCache) -> bool:
    try:
        from jax import monitoring
    except ImportError:
        return False
    register = getattr(monitoring, "register_event_listener", None)
    if register is None:
        return False
    register(cache.listen)
    return True


def _entries(folder: Optional[str]) -> int:
    if folder is None or not os.path.isdir(folder):
        return 0
    return sum(len(files) for _root, _dirs, files in os.walk(folder))
