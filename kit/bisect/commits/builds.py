"""The release builds a JAX commit can run on, and which one it runs on.

A commit's Python is laid over a built release environment
(`kit.install.overlay`); jax refuses a jaxlib outside ``_minimum_jaxlib_version``
.. its own version (:class:`kit.history.version_file.JaxlibRange`). The commit
search lists the builds at hand (the two releases around the change), and
:func:`choose_build` takes the first accepted one in that order, preferring
one already built.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from ...history.version_file import JaxlibRange


@dataclass(frozen=True)
class Build:
    """A release environment a commit can run on: which release, which jaxlib, built yet or not."""

    release: str
    jaxlib: str
    python: str | None
    built: bool
    side: str = ""
    """``bad`` or ``good``: which end of the release search it comes from (for the report)."""

    def __str__(self) -> str:
        return f"jaxlib {self.jaxlib} (jax {self.release}'s environment)"


def choose_build(accepted: JaxlibRange | None, builds: Sequence[Build]) -> tuple[Build | None, str]:
    """The build to run a commit on, or None and why: accepted builds, built ones first, in ``builds``' order."""
    if accepted is None:
        return None, "its jax/version.py names no jaxlib range (not JAX's package at this commit?)"
    fitting = [build for build in builds if accepted.accepts(build.jaxlib)]
    if not fitting:
        have = ", ".join(f"jaxlib {b.jaxlib}" for b in builds) or "none"
        return None, f"it needs {accepted}; the builds at hand are {have}"
    return next((build for build in fitting if build.built), fitting[0]), ""
