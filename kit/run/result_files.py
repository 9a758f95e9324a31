"""Reading a result file a check wrote: any content gives a JSON object or one sentence why not.

A user's script writes ``KIT_RESULT`` and a repro writes ``RESULT.json``, and
either may leave anything there: nothing, a folder, a named pipe (reading it
would wait forever), a link to ``/dev/zero``, gigabytes, bytes that are not
UTF-8, text that is not JSON, or JSON nested deeper than Python's recursion
limit. Each is refused here, before it is read whole, with one sentence that
names the file; the run then ends ``crashed`` with that sentence and a record,
never a traceback. The limits also bound what a record can inherit from the
file (``MAX_BYTES``, and json_text's ``MAX_DEPTH``). The text itself is decoded
as every file read back is (kit/records/json_text.py); this module adds what a
file a check just wrote can be besides bad text.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from ..errors import out_of_files
from ..records import JsonTextError, decode
from ..json_types import JsonObject
from ..text_bounds import human_size

MAX_BYTES = 4_000_000
"""A result is a verdict, a reason, key figures and samples: a few kB, a few MB with long sample lists."""

class ResultFileError(ValueError):
    """The file is there but unusable; the message is one sentence naming it."""


def read_json_object(path: Path, name: str) -> JsonObject | None:
    """The JSON object in ``path``; None when there is no such file; else ResultFileError naming ``name``."""
    try:
        info = os.stat(path)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise ResultFileError(f"{name} could not be read ({exc.strerror or exc})") from None
    if stat.S_ISDIR(info.st_mode):
        raise ResultFileError(f"{name} is a folder, not a file")
    if not stat.S_ISREG(info.st_mode):
        raise ResultFileError(f"{name} is not a regular file (a pipe, a device or a socket)")
    data = _read_bounded(path, name)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ResultFileError(f"{name} is not UTF-8 text (byte 0x{data[exc.start]:02x} at offset {exc.start})") \
            from None
    try:
        value = decode(text)  # any text: JSON values or one reason (too deep, a 5000-digit integer, torn)
    except JsonTextError as exc:
        raise ResultFileError(f"{name}: {exc}") from None
    if not isinstance(value, dict):
        raise ResultFileError(f"{name} must hold a JSON object, not {_kind(value)}")
    return value


def read_or_why(path: Path, name: str) -> tuple[JsonObject | None, str]:
    """(the object, "") or (None, why): "" when the file is simply missing, the sentence when it is unusable."""
    try:
        return read_json_object(path, name), ""
    except ResultFileError as exc:
        return None, str(exc)


def _read_bounded(path: Path, name: str) -> bytes:
    try:
        with open(path, "rb") as handle:
            data = handle.read(MAX_BYTES + 1)
    except OSError as exc:
        fault = out_of_files(exc)  # the file is fine; the kit could not open it: no crash of the release
        if fault is not None:
            raise fault from None
        raise ResultFileError(f"{name} could not be read ({exc.strerror or exc})") from None
    if len(data) > MAX_BYTES:
        size = max(os.stat(path).st_size, len(data))
        raise ResultFileError(f"{name} holds {human_size(size)}, more than the {human_size(MAX_BYTES)} "
                              "a result may hold")
    return data


def _kind(value: object) -> str:
    return {list: "an array", str: "a string", bool: "a boolean", type(None): "null"}.get(type(value), "a number")
