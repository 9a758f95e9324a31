"""What the explain fault tests share: each release's "environment" is this Python, and captured HLO to copy."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from kit.explain import capture as capture_module
from kit.install.environment import Environment, Prepared

DATA = Path(__file__).resolve().parents[1] / "data" / "hlo"


def this_python(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every release runs the program with this interpreter (the program stands in for XLA)."""
    def prepare(matrix, request, log):  # type: ignore[no-untyped-def]
        env = Environment(python=Path(sys.executable), versions={"jax": request.version}, obtained="reused")
        return Prepared(plan=None, resolution=None, environment=env, jax=request.version)

    monkeypatch.setattr(capture_module.runner, "prepare", prepare)
