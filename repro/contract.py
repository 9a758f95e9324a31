"""What the kit and the repros agree on: exit codes, strict JSON (and, next to them, the parameter rules).

Standard library only, so the kit (in nox's process) imports it too: one
name and one value per exit code, on both sides of the subprocess boundary.
"""

import json
import math
from typing import Any, Callable, Optional

# The one table of exit codes, for both halves: a value means one thing whichever process exits with it. The kit's
# command exits with the first six (kit/exit_codes.py names them for the kit), a repro with OK, USAGE, UNSUPPORTED
# and REFUSED (the runner reads them, kit/run/runner.py and kit/run/multiprocess.py). Records keep the words a
# code was read into (a status, a reason), never a code to be read again, so a value moved here leaves every
# record readable: UNSUPPORTED was 4 in the repros (the kit's NETWORK) and REFUSED 3 (the kit's NOT_INSTALLABLE).
EXIT_OK = 0
"""The command did its work; a check ran, whatever its verdict (a repro: RESULT.json is written)."""
EXIT_FAILED = 1
"""The kit: a check crashed, timed out or refused a size; ``--fail-on-affected`` and affected; a record went
elsewhere."""
EXIT_USAGE = 2
"""Bad input: one ERROR line and a TIP (the kit, `kit.errors.KitError`); one ``error:`` line, no RESULT.json (a
repro)."""
EXIT_NOT_INSTALLABLE = 3
"""The kit: the index answered and has no usable wheels for the release (a record says why)."""
EXIT_NETWORK = 4
"""The kit: the index could not be reached and the release's environment is not built yet (no record)."""
EXIT_UNSUPPORTED = 5
"""This release cannot run what was asked here, e.g. N processes without CPU collectives (a repro: RESULT.json
says why; the kit: a record)."""
EXIT_REFUSED = 6
"""A repro: the requested size does not fit this machine's memory, refused before any work, no RESULT.json (the
kit's command then exits EXIT_FAILED, with a record of status refused)."""
EXIT_INTERRUPTED = 130
"""The kit: Ctrl-C (128 + SIGINT); everything finished before it is kept."""

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
