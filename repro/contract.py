"""What the kit and the repros agree on: exit codes, strict JSON (and, next to them, the parameter rules).

Standard library only, so the kit (in nox's process) imports it too: one
name and one value per exit code, on both sides of the subprocess boundary.
"""

import math
from typing import Any

EXIT_OK = 0
"""The check ran, whatever its verdict; RESULT.json is written."""
EXIT_USAGE = 2
"""Bad arguments: one ``error:`` line, no RESULT.json."""
EXIT_REFUSED = 3
"""The requested size does not fit this machine's memory: refused before any work, no RESULT.json."""


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
