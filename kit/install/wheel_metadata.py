"""A wheel's METADATA without downloading the wheel.

Indexes that implement PEP 658 serve it next to the wheel as
``<wheel url>.metadata`` (announced by ``core-metadata`` in the PEP 691 JSON
page, ``data-dist-info-metadata`` in older pages). Where they do not (the
proxy this kit is developed behind strips it, and old uploads on some
mirrors lack it), the file is read the way uv reads it: the zip's central
directory from the end of the wheel with an HTTP range request, then the one
compressed member, so a 1.7 MB jax wheel costs three small requests.

:func:`read_zip_member` is pure over a ``fetch(start, end)`` callable, so the
zip walk is tested without a network.
"""

from __future__ import annotations

import struct
import zlib
from typing import Callable

from .. import http

Fetch = Callable[[int, int], bytes]
"""``fetch(start, end)``: bytes ``start`` to ``end - 1`` of the file."""

_EOCD = b"PK\x05\x06"
_CENTRAL = b"PK\x01\x02"
_LOCAL = b"PK\x03\x04"
_TAIL = 64 * 1024 + 22  # the end-of-directory record plus the largest zip comment


class NotAWheel(ValueError):
    """The bytes are not a zip this reader understands (zip64, damaged)."""


def read_zip_member(size: int, fetch: Fetch, suffix: str) -> bytes:
    """The first member whose name ends with ``suffix``, read with as few ranges as possible."""
    tail_start = max(0, size - _TAIL)
    tail = fetch(tail_start, size)
    at = tail.rfind(_EOCD)
    if at < 0 or len(tail) < at + 22:
        raise NotAWheel("no end-of-central-directory record")
    cd_size, cd_offset = struct.unpack("<II", tail[at + 12 : at + 20])
    if cd_offset == 0xFFFFFFFF:
        raise NotAWheel("zip64 archives are not read remotely")
    if cd_offset >= tail_start:
        directory = tail[cd_offset - tail_start : cd_offset - tail_start + cd_size]
    else:
        directory = fetch(cd_offset, cd_offset + cd_size)
    method, compressed, offset = _find_member(directory, suffix)
    # Local header (30 bytes) + name + extra, then the data; the extra's length is only
    # known from the local header, so ask for a little more than the data needs.
    chunk = fetch(offset, min(size, offset + 30 + 1024 + compressed))
    if chunk[:4] != _LOCAL:
        raise NotAWheel("no local header where the directory says")
    name_len, extra_len = struct.unpack("<HH", chunk[26:30])
    start = 30 + name_len + extra_len
    if len(chunk) < start + compressed:
        chunk += fetch(offset + len(chunk), offset + start + compressed)
    data = chunk[start : start + compressed]
    if method == 0:
        return data
    if method == 8:
        return zlib.decompressobj(-15).decompress(data)
    raise NotAWheel(f"compression method {method}")


def _find_member(directory: bytes, suffix: str) -> tuple[int, int, int]:
    """(compression method, compressed size, local header offset) of the member."""
    at = 0
    while directory[at : at + 4] == _CENTRAL:
        method, = struct.unpack("<H", directory[at + 10 : at + 12])
        compressed, = struct.unpack("<I", directory[at + 20 : at + 24])
        name_len, extra_len, comment_len = struct.unpack("<HHH", directory[at + 28 : at + 34])
        offset, = struct.unpack("<I", directory[at + 42 : at + 46])
        name = directory[at + 46 : at + 46 + name_len].decode("utf-8", "replace")
        if name.endswith(suffix):
            return method, compressed, offset
        at += 46 + name_len + extra_len + comment_len
    raise NotAWheel(f"no member ending in {suffix}")


def http_fetch(url: str) -> Fetch:
    """A range reader for ``url`` over `kit.http` (kept-alive where it can be)."""

    def fetch(start: int, end: int) -> bytes:
        return http.read_range(url, start, end)

    return fetch


def remote_metadata(url: str, size: int | None, pep658: bool) -> str:
    """METADATA of the wheel at ``url``: PEP 658's file when offered, else read by ranges.

    Network failures are `kit.http`'s (`Unreachable`, `HttpError`); the index
    that asked says them in its own words.
    """
    if pep658:
        return http.get(url + ".metadata").body.decode("utf-8")
    if size is None:
        size = http.content_length(url)
    return read_zip_member(size, http_fetch(url), ".dist-info/METADATA").decode("utf-8")
