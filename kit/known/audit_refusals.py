"""What an audit refuses before it runs a check: an installation where no check could decide anything.

Each of these ended "none of the N known problems found", exit 0, with
nothing tested: a CI gate on the exit code passed. Now each is one sentence,
exit 2, nothing installed or recorded: a ``JAX_PLATFORMS`` that keeps JAX off
the CPU the checks run on, a release too old to compile for the chip asked,
an interpreter (``--python``) without JAX, whose JAX cannot start, or without
the compiler of the chip asked.
"""

from __future__ import annotations

import os

from ..errors import UsageError
from ..install import ExistingPython, Interpreter, inspect_interpreter
from ..run.facts import require_platform
from ..targets import Target

COMPILERS = {"tpu": ("libtpu", "libtpu-nightly"),
             "cuda": ("jax-cuda12-plugin", "jax-cuda13-plugin", "jax-cuda12-pjrt", "jax-cuda13-pjrt")}
"""The distributions that compile for a target's platform without its hardware (what ``jax[tpu]`` and the CUDA
plugin install)."""


def refuse_what_cannot_run(version: str, existing: ExistingPython | None, target: Target | None) -> None:
    if target is None:
        require_platform("cpu" if existing is None else None)  # the catalogue's checks run on CPU host devices
    if target is not None and version and not target.compiles_on(version):
        raise UsageError(f"jax {version} cannot compile for {target.title}: the kit compiles for {target.platform} "
                         f"targets from jax {target.lowest_release} on, so nothing was installed or compiled",
                         f"audit a release from {target.lowest_release} on, e.g. jax-kit audit "
                         f"{target.lowest_release} --target {target.name}")
    if existing is not None:
        _usable(inspect_interpreter(existing.python), target)


def _usable(interpreter: Interpreter, target: Target | None) -> None:
    python = interpreter.python
    if "jax" not in interpreter.packages or "jaxlib" not in interpreter.packages:
        missing = " or ".join(name for name in ("jax", "jaxlib") if name not in interpreter.packages)
        raise UsageError(f"{python} has no {missing} installed, so it holds no JAX to audit: nothing was tested",
                         f"install JAX there, or audit a release the kit installs: jax-kit audit 0.4.35")
    if interpreter.backend is None:
        platforms = os.environ.get("JAX_PLATFORMS", "").strip()
        told = f" (JAX_PLATFORMS={platforms} in the environment)" if platforms else ""
        raise UsageError(f"{python}: its JAX cannot start{told} ({interpreter.jax_problem or 'it did not answer'}), "
                         "so no check could decide anything: nothing was tested",
                         f"see why: {python} -c 'import jax; print(jax.devices())'"
                         + ("; unset JAX_PLATFORMS, or set it to cpu" if platforms else ""))
    if target is not None:
        compilers = COMPILERS.get(target.platform, ())
        if not any(name in interpreter.packages for name in compilers):
            raise UsageError(f"{python} has no compiler for {target.title} ({' or '.join(compilers)} is not "
                             f"installed there; jax {interpreter.packages['jax']}), so nothing could be compiled "
                             "for it: nothing was tested",
                             f"install it there (pip install 'jax[{'tpu' if target.platform == 'tpu' else 'cuda12'}]"
                             f"=={interpreter.packages['jax']}'), or let the kit install the release with it: "
                             f"jax-kit audit {interpreter.packages['jax']} --target {target.name}")
