"""JSON text from a file anyone can write, read without ever raising anything but one sentence.

Records, probe observations and locks are read back from folders people drop
files into. Whatever such a file holds (an integer of 5000 digits, arrays
nested 100,000 deep, NaN, bytes that are not UTF-8 once decoded by the
caller), `decode` returns plain JSON values or raises `JsonTextError` whose
message says why, in one sentence, so every reader lists the file as unusable
and goes on. What it returns is strict JSON again: NaN and infinities become
null (as `repro.contract.json_safe` writes them) and nothing is nested deeper
than `MAX_DEPTH`, so no later step (a report, a strict writer) meets them.
"""

from __future__ import annotations

import json
import stat
from pathlib import Path
from collections.abc import Iterable

MAX_DEPTH = 64
"""Deeper than any record the kit writes (about 6 levels) by a wide margin."""

MAX_BYTES = 64 * 2**20
"""Larger files are not read: the kit bounds what a record keeps of output to far less."""


class JsonTextError(ValueError):
    """The text is not usable JSON; the message says why in one sentence."""


def decode(text: str) -> object:
    """The JSON value ``text`` holds, or `JsonTextError`: an ``object`` its reader narrows (`kit.json_types`)."""
    if not text.strip():
        raise JsonTextError("empty file")
    try:
        data: object = json.loads(text, parse_constant=lambda _name: None)
    except json.JSONDecodeError as error:
        raise JsonTextError(
            f"not valid JSON (truncated or corrupt?): {error.msg} (line {error.lineno}, column {error.colno})"
        ) from None
    except RecursionError:
        raise JsonTextError(f"nested too deeply to read (the kit reads up to {MAX_DEPTH} levels)") from None
    except (ValueError, MemoryError) as error:  # e.g. an integer past Python's digit limit
        raise JsonTextError(f"not usable JSON: {_first_line(error)}") from None
    depth = nesting_depth(data)
    if depth > MAX_DEPTH:
        raise JsonTextError(f"nested more than {MAX_DEPTH} levels deep (the kit reads up to {MAX_DEPTH})")
    return data


def read_text(path: Path, limit: int = MAX_BYTES) -> str:
    """A JSON file's text, or `JsonTextError` saying why it cannot be read (too large, not UTF-8, an OS error)."""
    try:
        info = path.stat()
        if not stat.S_ISREG(info.st_mode) and not stat.S_ISDIR(info.st_mode):
            # A FIFO nobody writes to would block the read forever, /dev/zero would never end it.
            raise JsonTextError("unreadable: not a regular file (a pipe, a device or a socket)")
        size = info.st_size
        if size > limit:
            raise JsonTextError(f"{size} bytes, larger than the {limit} the kit reads")
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError as error:
        raise JsonTextError(f"unreadable: not UTF-8 text (byte {error.start})") from None
    except OSError as error:
        raise JsonTextError(f"unreadable: {error.strerror or error}") from None


def read_json(path: Path, limit: int = MAX_BYTES) -> object:
    """The JSON value a file holds, or `JsonTextError`: `read_text`, then `decode`."""
    return decode(read_text(path, limit))


def nesting_depth(value: object) -> int:
    """How many arrays and objects deep ``value`` goes (0 for a scalar), without recursion; past
    `MAX_DEPTH` it stops counting at `MAX_DEPTH` + 1."""
    deepest, stack = 0, [(value, 0)]
    while stack:
        item, depth = stack.pop()
        children: Iterable[object]
        if isinstance(item, dict):
            children = item.values()
        elif isinstance(item, list):
            children = item
        else:
            deepest = max(deepest, depth)
            continue
        deepest = max(deepest, depth + 1)
        if deepest > MAX_DEPTH:
            return deepest  # no need to walk the rest
        stack.extend((child, depth + 1) for child in children)
    return deepest


def _first_line(error: BaseException) -> str:
    text = str(error).splitlines()[0] if str(error) else type(error).__name__
    return text[:200]
