"""The least of a ``jax`` package that the kit's "does JAX itself run here?" accepts (kit/run/jax_runs.py).

For tests whose release environment is this interpreter, which has no JAX:
a script that fails there must fail as a script, not because JAX is absent.
``broken=True`` writes one whose import fails, as a commit laid over a
jaxlib it cannot use does.
"""

from __future__ import annotations

from pathlib import Path

_INIT = '''\
__version__ = "0.6.0"


class _Device:
    device_kind = "cpu"
    platform = "cpu"


def devices():
    return [_Device()]


def default_backend():
    return "cpu"
'''
_BROKEN = "raise ImportError(\"cannot import name '_jax' from 'jaxlib'\")  # as on a jaxlib without it\n"
NUMPY = '''\
"""Enough of jax.numpy for the kit's question "does JAX run here?" (kit/run/jax_runs.py)."""


class _Array(list):
    def __add__(self, other):
        return _Array(x + other for x in self)

    def sum(self):
        return sum(self)


def arange(n):
    return _Array(range(n))
'''


def write_fake_jax(folder: Path, broken: bool = False) -> Path:
    """``folder`` holding ``jax/``: put it first on PYTHONPATH."""
    package = folder / "jax"
    package.mkdir(parents=True, exist_ok=True)
    (package / "__init__.py").write_text(_BROKEN + _INIT if broken else _INIT)
    (package / "numpy.py").write_text(NUMPY)
    return folder
