"""The types of what JSON and TOML text decode to, named once for every reader's edge.

A value read from a file anyone can edit (a record, a lock, a cached answer,
matrix.toml, a catalogue entry) or from a child process's JSON is one of these
until its reader has checked it and turned it into a typed value (a frozen
dataclass, a TypedDict, an enum): the code past that edge handles the typed
value, never the open object. Written the other way: a typed value gives
`JsonObject` back where it is about to be written.

``object`` rather than ``Any`` on purpose: mypy then asks for the ``isinstance``
that checks each value before it is used.
"""

from __future__ import annotations

from typing import Dict, Mapping

JsonObject = Dict[str, object]
"""A JSON object as ``json.loads`` gives it, or as it is about to be dumped."""

TomlTable = Mapping[str, object]
"""A TOML table as ``tomllib`` gives it (read only: the kit never writes TOML through this)."""
