"""Observations for the tests, written flat (``observed("ran", "affected", "why", seconds=4.0)``).

The kit builds an observation part by part; a test names the few fields it is about, and this puts each in
its part (kit/bisect/observation.py).
"""

from __future__ import annotations

from dataclasses import fields
from typing import Any

from kit.bisect.observation import CameFrom, Cost, Found, Installed, Observation

_PARTS = {"came_from": CameFrom, "cost": Cost, "installed": Installed}


def observed(status: str, verdict: str | None, reason: str, source: str = "run", **given: Any) -> Observation:
    """An observation with the fields given, each in its part; a field no part has is a TypeError."""
    parts = {part: {f.name: given.pop(f.name) for f in fields(kind) if f.name in given}
             for part, kind in _PARTS.items()}
    found = Found(status, verdict, reason, **given)  # what is left belongs to what was found
    return Observation(found, CameFrom(source, **parts["came_from"]), Cost(**parts["cost"]),
                       Installed(**parts["installed"]))
