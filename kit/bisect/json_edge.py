"""What a bisect reads from and writes to JSON: one alias for a JSON object, and the narrowing of a read value.

Between the files a bisect's values are typed (an observation, a metric's summary, a run spec); a JSON object
is a `JsonObject` only where it is written (``to_json``) or read back, and a value read from one is narrowed
here, at that edge, before anything trusts its type (mypy refuses an explicit ``Any`` in kit/bisect).
"""

from __future__ import annotations

import json
from typing import Dict, Mapping

JsonObject = Dict[str, object]
"""A JSON object as it is written or read, its values not yet trusted."""


def as_object(value: object) -> Mapping[str, object]:
    """``value`` where it is a JSON object, else an empty one (a file anyone can edit may hold anything)."""
    return value if isinstance(value, Mapping) else {}


def as_list(value: object) -> list[object]:
    """``value`` where it is a JSON array, else an empty one."""
    return list(value) if isinstance(value, (list, tuple)) else []


def as_number(value: object, default: float = 0.0) -> float:
    """``value`` where it is a finite JSON number (not a bool), else ``default``."""
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else default


def json_form(value: Mapping[str, object]) -> JsonObject:
    """``value`` as it reads back from a JSON file (tuples as lists, keys sorted): how identities compare it."""
    loaded = json.loads(json.dumps(value, sort_keys=True))
    return {str(key): item for key, item in loaded.items()} if isinstance(loaded, dict) else {}
