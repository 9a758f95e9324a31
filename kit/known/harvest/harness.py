"""JAX's test harness for one era: the packages its tests import, as JAX's own test requirements pinned them.

JAX's tests need ``jax._src.test_util`` (the commit's own, laid over with
``jax/``), absltest, pytest, often hypothesis and a few more. They are a
check's ``requires`` (`kit.install.key.InstallKey`): resolved with the
release under its era's cut-off and locked, in an environment of their own,
so what is unpinned gets the version of the release's time and what JAX's
``build/test-requirements.txt`` pinned then (``hypothesis==6.142.1``) stays
pinned.
"""

from __future__ import annotations

import re

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name

from ...history.git import GitFailed, git
from ...history.source import History
from ...requirements import requirements

HARNESS = ("absl-py", "pytest", "hypothesis", "cloudpickle", "mpmath", "portpicker", "filelock")
"""What JAX's tests import besides JAX, numpy and scipy (pytest-xdist, matplotlib, auditwheel: not for one test)."""

TEST_REQUIREMENTS = "build/test-requirements.txt"


def harness_requirements(history: History, ref: str) -> tuple[str, ...]:
    """`HARNESS`, each with the specifier JAX's test requirements at ``ref`` gave it (none: the era's newest)."""
    try:
        text = git(history.path, "show", f"{ref}:{TEST_REQUIREMENTS}")
    except GitFailed:
        text = ""
    pinned = era_specifiers(text)
    return requirements([pinned.get(name, name) for name in HARNESS], "JAX's test requirements")


def era_specifiers(text: str) -> dict[str, str]:
    """``name -> requirement`` for each plain line of a requirements file (comments, options, markers dropped)."""
    found: dict[str, str] = {}
    for line in text.splitlines():
        line = re.sub(r"\s+#.*$", "", line).strip()
        if not line or line.startswith(("#", "-")):
            continue
        try:
            parsed = Requirement(line)
        except InvalidRequirement:
            continue
        if parsed.url or parsed.marker:
            continue
        name = canonicalize_name(parsed.name)
        found[name] = f"{name}{parsed.specifier}"
    return found
