"""Where a built-in check's compiles are kept between runs: one folder per jaxlib build, backend and hardware.

The repro points JAX's own persistent compilation cache at the folder named
here (`repro.compile_cache`, through ``KIT_COMPILE_CACHE``). JAX keys each
entry by the program, the compile options, the devices and XLA flags, and
the jaxlib; the folder adds what its key might not hold on every release:
the jaxlib build and its GPU plugins, the backend, the CPU model and (for a
GPU) the GPUs and driver, so a cache on a shared file system never hands one
node's executable to another kind of node. Commits laid over one build share
their build's folder: that is the point, most of them lower to the same
programs. The folder is no part of a run's identity: a run with reused
compiles reads the same HLO and gives the same verdict as one without
(tests/test_repro_compile_cache.py).
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

from repro.compile_cache import ENV

from ..install import Environment
from .facts import hardware_facts

_BUILD_PACKAGE = re.compile(r"^(jaxlib|jax[-_.]?(cuda|rocm)\d*[-_.]?(plugin|pjrt)?|libtpu.*)$", re.IGNORECASE)
"""The packages that are the compiled part of JAX: jaxlib and its backend plugins."""


def compile_cache_dir(envs_dir: Path, env: Environment, backend: str) -> Path | None:
    """The folder for runs in ``env`` on ``backend``; None where no jaxlib is known to key it by."""
    build = {name.lower(): version for name, version in sorted(env.versions.items()) if _BUILD_PACKAGE.match(name)}
    jaxlib = next((version for name, version in build.items() if name == "jaxlib"), None)
    if jaxlib is None:
        return None
    key = json.dumps({"build": build, "backend": backend, "hardware": hardware_facts(backend)}, sort_keys=True)
    digest = hashlib.sha256(key.encode()).hexdigest()[:12]
    return envs_dir.parent / "compile-cache" / f"{backend}-jaxlib-{jaxlib}-{digest}"


def compile_cache_env(envs_dir: Path, env: Environment, backend: str) -> dict[str, str]:
    """The variable that names the folder to the repro ({} for none: it then compiles everything itself)."""
    folder = compile_cache_dir(envs_dir, env, backend)
    return {ENV: str(folder.absolute())} if folder is not None else {}
