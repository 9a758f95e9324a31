"""What the resolution tests share: a closed era's plan, its resolved versions, and a stand-in for uv's cache of PyPI pages."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from kit.install import uv_cache
from kit.install.plan import InstallPlan

CLOSED = "2024-11-05T20:56:00Z"
PLAN = InstallPlan(jax="0.4.35", backend="cpu", requirements=("jax[cpu]==0.4.35", "scipy"), exclude_newer=CLOSED,
                   index_url="https://pypi.org/simple", pythons=("3.13",))
VERSIONS = {"jax": "0.4.35", "jaxlib": "0.4.35", "numpy": "2.1.3", "scipy": "1.14.1", "ml-dtypes": "0.5.0"}


def fake_uv_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, read_at: float) -> Path:
    """uv's cache of PyPI pages, each last read from the index at ``read_at``."""
    pages = tmp_path / "uv-cache" / "simple-v28" / "pypi"
    pages.mkdir(parents=True)
    for name in VERSIONS:
        (pages / f"{name}.rkyv").write_bytes(b"")
        os.utime(pages / f"{name}.rkyv", (read_at, read_at))
    monkeypatch.setattr(uv_cache, "_pypi_pages", lambda uv: pages)
    return pages
