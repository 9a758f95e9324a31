"""The types of what JSON and TOML text decode to, and the narrowing of a value read from them: every reader's edge.

A value read from a file anyone can edit (a record, a lock, a cached answer,
matrix.toml, a catalogue entry) or from a child process's JSON is one of these
until its reader has checked it and turned it into a typed value (a frozen
dataclass, a TypedDict, an enum): the code past that edge handles the typed
value, never the open object. Written the other way: a typed value gives
`JsonObject` back where it is about to be written.

``object`` rather than ``Any`` on purpose: mypy then asks for the ``isinstance``
that checks each value before it is used, and the helpers below are that check
where a wrong value should read as an empty or a default one (a file anyone
could edit may hold anything anywhere). Reading JSON text itself, never raising
but one sentence, is `kit.records.json_text`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Dict, List

JsonObject = Dict[str, object]
"""A JSON object as ``json.loads`` gives it, or as it is about to be dumped: the one type for a value that crosses a
JSON edge (a file, KIT_RESULT, the child's protocol) or stays open by design (a run's evidence)."""

TomlTable = Mapping[str, object]
"""A TOML table as ``tomllib`` gives it (read only: the kit never writes TOML through this)."""


def as_object(value: object) -> JsonObject:
    """A copy of ``value`` where it is a JSON object (any mapping), else an empty one: never the caller's own."""
    return dict(value) if isinstance(value, Mapping) else {}


def as_text(value: object) -> str:
    """``value`` where it is text, else ""."""
    return value if isinstance(value, str) else ""


def as_list(value: object) -> List[object]:
    """``value`` where it is a JSON array (a list or a tuple), else an empty one."""
    return list(value) if isinstance(value, (list, tuple)) else []


def as_number(value: object, default: float = 0.0) -> float:
    """``value`` where it is a JSON number (not a bool), else ``default``."""
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else default


def json_form(value: Mapping[str, object]) -> JsonObject:
    """``value`` as it reads back from a JSON file (tuples as lists, keys sorted): how identities compare it."""
    loaded = json.loads(json.dumps(value, sort_keys=True))
    return {str(key): item for key, item in loaded.items()} if isinstance(loaded, dict) else {}
