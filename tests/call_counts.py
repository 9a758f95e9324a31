"""Counting what the kit calls: how many install keys, check lookups or lock reads one run makes."""

from __future__ import annotations

import sys
from collections import Counter
from typing import Any, Callable

import pytest


def count_calls(monkeypatch: pytest.MonkeyPatch, name: str, real: Callable[..., Any], counts: Counter[str],
                 by: Callable[..., str] | None = None) -> None:
    """Every kit module's ``name`` (its own import of ``real``) replaced by a counting wrapper.

    A module that calls the name counts; ``dataclasses.replace`` on an install key calls the class itself, so a
    release's own key made from the spec's does not count as a new one. ``by``: also counted under
    ``name by(arguments)``.
    """
    def counted(*args: Any, **kwargs: Any) -> Any:
        counts[name] += 1
        if by is not None:
            counts[f"{name} {by(*args, **kwargs)}"] += 1
        return real(*args, **kwargs)

    for module_name, module in list(sys.modules.items()):
        if (module_name == "kit" or module_name.startswith("kit.")) and getattr(module, name, None) is real:
            monkeypatch.setattr(module, name, counted)
