"""Real JAX release environments for the integration lane: built through the kit, as `nox -s scaling-X` would.

A test that needs jax 0.4.20's interpreter asks `release_python("0.4.20")`: the
environment in this checkout's `.nox/jax-envs` (the one every session shares),
built era-correctly first where it is not built yet. Only an index out of reach
skips the test, and the skip says so; a release that cannot install fails it.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from kit.config import load_matrix
from kit.errors import IndexUnreachable
from kit.install.environment import prepare
from kit.install.key import InstallKey

ROOT = Path(__file__).resolve().parent.parent


def release_python(version: str) -> Path:
    """The interpreter of jax ``version``'s CPU environment, built here first if need be."""
    matrix = load_matrix(ROOT / "matrix.toml")
    try:
        prepared = prepare(matrix, version, InstallKey("cpu"), lambda line: None)
    except IndexUnreachable as exc:
        pytest.skip(f"jax {version}'s environment is not built here and the index is out of reach: {exc}")
    assert prepared.environment is not None, f"jax {version} did not install here: {prepared.problem}"
    return prepared.environment.python
