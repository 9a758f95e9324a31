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

import http.client
import struct
import threading
import urllib.error
import urllib.parse
import urllib.request
import zlib
from typing import Callable

from ..errors import PackageIndexError

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


class _KeptAlive:
    """One kept-alive HTTPS connection per host, used by one request at a time.

    Two dozen wheels cost about fifty small reads; opening a connection for
    each (DNS, TLS) stalled for 5 s now and then here, in the name lookup.
    One connection per host asks the resolver once.
    """

    def __init__(self) -> None:
        self._connections: dict[str, http.client.HTTPSConnection] = {}
        self._lock = threading.Lock()

    def get(self, url: str, headers: dict[str, str]) -> tuple[int, bytes]:
        parts = urllib.parse.urlsplit(url)
        path = parts.path + (f"?{parts.query}" if parts.query else "")
        with self._lock:
            for attempt in range(2):  # a kept connection the server closed meanwhile: reconnect once
                connection = self._connections.get(parts.netloc)
                if connection is None:
                    connection = self._connections[parts.netloc] = http.client.HTTPSConnection(parts.netloc,
                                                                                                timeout=60)
                try:
                    connection.request("GET", path, headers=headers)
                    response = connection.getresponse()
                    return response.status, response.read()
                except (http.client.HTTPException, OSError):
                    connection.close()
                    del self._connections[parts.netloc]
                    if attempt:
                        raise
        raise AssertionError("unreachable")


_KEPT = _KeptAlive()


def _kept_alive_possible(url: str) -> bool:
    """https without a proxy (urllib honours proxy settings; a bare connection would not)."""
    return url.startswith("https://") and not urllib.request.getproxies()


def http_fetch(url: str) -> Fetch:
    """A range reader for ``url`` (a server that ignores ranges is sliced locally)."""

    def fetch(start: int, end: int) -> bytes:
        headers = {"Range": f"bytes={start}-{end - 1}"}
        try:
            if _kept_alive_possible(url):
                status, data = _KEPT.get(url, headers)
                if status in (200, 206):
                    return data[start:end] if status == 200 else data
            # No kept connection, or a redirect or an error to report in urllib's words.
            with urllib.request.urlopen(urllib.request.Request(url, headers=headers), timeout=60) as response:
                data = response.read()
                whole = response.status == 200
        except (urllib.error.URLError, http.client.HTTPException, OSError) as exc:
            raise PackageIndexError(f"could not read {url}: {getattr(exc, 'reason', exc)}",
                                    "check the network or the index_url in matrix.toml") from None
        return data[start:end] if whole else data

    return fetch


def remote_metadata(url: str, size: int | None, pep658: bool) -> str:
    """METADATA of the wheel at ``url``: PEP 658's file when offered, else read by ranges."""
    if pep658:
        return _get(url + ".metadata").decode("utf-8")
    fetch = http_fetch(url)
    if size is None:
        size = _content_length(url)
    return read_zip_member(size, fetch, ".dist-info/METADATA").decode("utf-8")


def _get(url: str) -> bytes:
    try:
        with urllib.request.urlopen(url, timeout=60) as response:
            return response.read()
    except (urllib.error.URLError, OSError) as exc:
        raise PackageIndexError(f"could not read {url}: {getattr(exc, 'reason', exc)}",
                                "check the network or the index_url in matrix.toml") from None


def _content_length(url: str) -> int:
    request = urllib.request.Request(url, method="HEAD")
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            return int(response.headers["Content-Length"])
    except (urllib.error.URLError, OSError, TypeError, ValueError) as exc:
        raise PackageIndexError(f"could not size {url}: {exc}", "check the network") from None
