"""How much text the kit keeps of what a check says, and how a cut is said.

A check's output and its KIT_RESULT are the script's to fill: one 20 MB line
must not become a 20 MB record, console line or matrix cell. Every place that
keeps or shows such text cuts it here, and a cut always says so and how much
went (``… [cut 19.9 MB]``), so a reader never mistakes a cut line for the
whole one.
"""

from __future__ import annotations

import re
from functools import partial
from typing import Callable

from .json_types import JsonObject

LINE_KEEP_BYTES = 2_000
"""One output line in a record (the output tail): enough for a long exception line."""

LINE_ECHO_BYTES = 8_000
"""One output line echoed to the console: a traceback line fits, a 20 MB line does not."""

TAIL_LINES = 40
TAIL_BYTES = 32_000
"""A record's output tail in all: the last lines, and never more than this many bytes of them."""

REASON_CHARS = 1_000
"""A record's reason is one sentence for a matrix cell, not a log."""

CELL_CHARS = 300
"""A cell of reports/matrix.md (a reason there is shortened further; the record keeps REASON_CHARS)."""

STRING_CHARS = 10_000
"""Any other string a record keeps (a summary figure, an environment fact from KIT_RESULT)."""


def human_size(nbytes: int) -> str:
    """``532 bytes``, ``1.2 kB``, ``19.9 MB``: decimal units, as file managers show them."""
    if nbytes < 1000:
        return f"{nbytes} byte" + ("" if nbytes == 1 else "s")
    size = float(nbytes)
    for unit in ("kB", "MB", "GB"):
        size /= 1000
        if size < 999.95:
            break
    return f"{size:.1f} {unit}"


def cut_marker(removed_bytes: int) -> str:
    return f"… [cut {human_size(removed_bytes)}]"


_UNITS = {"byte": 1, "bytes": 1, "kB": 1000, "MB": 1000**2, "GB": 1000**3}
_EARLIER_CUT = re.compile(r"… \[cut ([0-9.]+) (bytes?|kB|MB|GB)\]$")


def cut(text: str, limit: int) -> str:
    """``text`` if it holds at most ``limit`` characters, else its head and how much was cut.

    Text cut before (a record's reason, cut again for a matrix cell) says the
    whole amount, not only the second cut's.
    """
    if len(text) <= limit:
        return text
    earlier = _EARLIER_CUT.search(text)
    before = 0
    if earlier:
        text, before = text[:earlier.start()], int(float(earlier.group(1)) * _UNITS[earlier.group(2)])
    removed = len(text[limit:].encode("utf-8", "replace")) + before
    return text[:limit] + cut_marker(removed)


def cut_strings(value: object, limit: int = STRING_CHARS) -> object:
    """``value`` (a JSON value) with every string in it (keys too) cut to ``limit`` characters; other values as
    they are; objects and arrays copied (tuples become lists), so ``value`` itself is never changed.

    Iterative, not recursive: a record's content came from a script and may
    nest deeper than Python's recursion limit before it is refused elsewhere.
    """
    root: list[object] = [value]
    stack: list[tuple[object, Callable[[object], None]]] = [(value, partial(root.__setitem__, 0))]
    while stack:
        item, put = stack.pop()  # ``put`` puts the item's bounded copy where the item was
        if isinstance(item, str):
            put(cut(item, limit))
        elif isinstance(item, dict):
            copy: dict[object, object] = {cut(k, limit) if isinstance(k, str) else k: v for k, v in item.items()}
            put(copy)
            stack.extend((v, partial(copy.__setitem__, k)) for k, v in copy.items())
        elif isinstance(item, (list, tuple)):
            items: list[object] = list(item)
            put(items)
            stack.extend((v, partial(items.__setitem__, i)) for i, v in enumerate(items))
    return root[0]


def bound_record(record: JsonObject) -> JsonObject:
    """A record as it may be kept: its reason cut to ``REASON_CHARS``, every other string to ``STRING_CHARS``."""
    reason = record.get("reason")
    bounded = cut_strings({**record, "reason": cut(reason, REASON_CHARS)} if isinstance(reason, str) else record)
    assert isinstance(bounded, dict)  # an object's bounded copy is an object
    return bounded
