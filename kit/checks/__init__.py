"""The built-in checks, one module each: what the kit asks of a check instead of branching on its name.

Each module of this package with a ``CHECK`` (a `BuiltinCheck`) is a built-in check; adding one is adding its
module here, its repro, and its parameters' one registration in `repro/parameters.py`, which both halves read
(docs/checks.md, "A built-in check").
"""

from __future__ import annotations

import importlib
import pkgutil
from functools import lru_cache

from .builtin import SPEEDUP_DEVICE_COUNTS, BuiltinCheck, Parameters, Summary

__all__ = ["SPEEDUP_DEVICE_COUNTS", "BuiltinCheck", "Parameters", "Summary", "builtin", "builtin_checks", "builtin_repro", "check_order", "names"]

_NOT_CHECKS = {"builtin"}


@lru_cache(maxsize=1)
def builtin_checks() -> dict[str, BuiltinCheck]:
    """Every built-in check by name, in their columns' order: found among this package's modules, once."""
    found: list[BuiltinCheck] = []
    for module in pkgutil.iter_modules(__path__):
        if module.name in _NOT_CHECKS or module.name.startswith("_"):
            continue
        check = getattr(importlib.import_module(f"{__name__}.{module.name}"), "CHECK", None)
        if isinstance(check, BuiltinCheck):
            found.append(check)
    return {check.name: check for check in sorted(found, key=lambda c: (c.order, c.name))}


def builtin(name: str) -> BuiltinCheck | None:
    """The built-in check called ``name``; None for a script check (or no check at all)."""
    return builtin_checks().get(name)


def builtin_repro(name: str) -> str:
    """The module a built-in check's run starts (``python -m repro.scaling``); KeyError for any other name."""
    return builtin_checks()[name].repro


def names() -> tuple[str, ...]:
    return tuple(builtin_checks())


def check_order(name: str) -> tuple[int, str]:
    """Where a check's column goes: the built-ins by their order, then every other by name."""
    check = builtin(name)
    return (check.order if check is not None else 1000, name)
