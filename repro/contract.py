"""What the kit and the repros agree on: exit codes, strict JSON (and, next to them, the parameter rules).

Standard library only, so the kit (in nox's process) imports it too: one
name and one value per exit code, on both sides of the subprocess boundary.
"""

import json
import math
from typing import Any, Callable, Optional

EXIT_OK = 0
"""The check ran, whatever its verdict; RESULT.json is written."""
EXIT_USAGE = 2
"""Bad arguments: one ``error:`` line, no RESULT.json."""
EXIT_REFUSED = 3
"""The requested size does not fit this machine's memory: refused before any work, no RESULT.json."""
EXIT_UNSUPPORTED = 4
"""This release cannot run what was asked (e.g. N processes without CPU collectives): RESULT.json says why."""

# A check script's exit code, as `git bisect run` reads it (kit/run/protocol.py; repro/kitcheck.py).
EXIT_UNAFFECTED = 0
"""The bug does not show."""
EXIT_AFFECTED = 1
"""The bug shows (any other code from 1 to 127 but 125 means the same)."""
EXIT_INCONCLUSIVE = 125
"""Cannot test this release (``git bisect run``'s "skip")."""


def json_safe(value: Any) -> Any:
    """Strict JSON for RESULT.json and records: numpy scalars become Python numbers, NaN and infinities null."""
    if hasattr(value, "item") and callable(value.item) and getattr(value, "shape", None) == ():
        value = value.item()  # numpy scalars
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {key: json_safe(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_safe(item) for item in value]
    return value


def strict_json(value: Any, indent: Optional[int] = 2, sort_keys: bool = True,
                default: Optional[Callable[[Any], Any]] = None) -> str:
    """``value`` as strict JSON text ending in a newline: `json_safe` first, so no NaN or Infinity
    (which strict parsers refuse) ever reaches a file; every JSON file the kit writes goes through here."""
    return json.dumps(json_safe(value), indent=indent, sort_keys=sort_keys, allow_nan=False, default=default) + "\n"
