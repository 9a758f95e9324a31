"""A user's own interpreter for tests, with exactly the packages a test names and a JAX that reports what it is told.

`fake_interpreter` writes ``bin/python``: this test run's Python started with
``-S`` (no site-packages, so nothing of the test environment shows) and a
folder of ``<name>-<version>.dist-info`` entries on its path, which
``importlib.metadata`` reads as installed. Where ``jax`` is among them, a
stand-in ``jax`` module answers ``jax.devices()`` and ``jax.default_backend()``
with the backend and devices given: it fakes what a JAX *reports* (say, a GPU
on a machine without one), never a measurement. Scripts run by it see only the
standard library and that folder.
"""

from __future__ import annotations

import sys
from pathlib import Path

FAKE_JAX = '''
__version__ = {version!r}


class _Device:
    device_kind = {kind!r}


def devices():
    return [_Device() for _ in range({count})]


def default_backend():
    return {backend!r}
'''


def fake_interpreter(folder: Path, packages: dict[str, str], *, backend: str = "cpu", kind: str = "cpu",
                     count: int = 1, jax_source: str | None = None) -> Path:
    """``folder/bin/python`` with ``packages`` installed; ``jax_source`` replaces the stand-in jax module."""
    site = folder / "site"
    for name, version in packages.items():
        info = site / f"{name.replace('-', '_')}-{version}.dist-info"
        info.mkdir(parents=True)
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")
    if "jax" in packages:
        (site / "jax").mkdir()
        source = jax_source if jax_source is not None else FAKE_JAX.format(
            version=packages["jax"], kind=kind, count=count, backend=backend)
        (site / "jax" / "__init__.py").write_text(source)
    python = folder / "bin" / "python"
    python.parent.mkdir(parents=True)
    python.write_text(f'#!/bin/sh\nPYTHONPATH="{site}${{PYTHONPATH:+:$PYTHONPATH}}" exec "{sys.executable}" -S "$@"\n')
    python.chmod(0o755)
    return python


RELEASE = {"jax": "0.4.35", "jaxlib": "0.4.35", "numpy": "2.1.3", "scipy": "1.14.1", "ml-dtypes": "0.5.1"}
"""What a hand-made jax 0.4.35 environment holds."""
