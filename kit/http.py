"""Reading over HTTP: the one place for timeouts, proxies, kept-alive connections, ranges, and failures.

Everything the kit reads from a server goes through here: the index's JSON
pages, wheel METADATA (PEP 658 files or zip ranges), the pages an install
depends on (probed before uv runs), JAX's changelog. A failure becomes one
of two exceptions, so every caller can say the same true sentence:

* :class:`Unreachable` — no answer at all (refused, DNS, proxy, timeout):
  ``"<url> could not be reached (Connection refused)"``. It says nothing
  about what the page holds.
* :class:`HttpError` — the server answered, with an error status.

Proxies are read from the environment at every request (``HTTPS_PROXY`` is
how users and tests cut the network), not once per process as
``urllib.request.urlopen``'s shared opener does. GETs that need no proxy
reuse one kept-alive connection per host: two dozen wheels cost about
fifty small reads, and opening a connection for each (DNS, TLS) stalled for
5 s now and then here, in the name lookup.
"""

from __future__ import annotations

import errno
import http.client
import socket
import sys
import threading
import urllib.error
import urllib.parse
import urllib.request
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Callable, Iterator, Mapping

DEFAULT_TIMEOUT_S = 60.0
"""How long a read may wait on a server that is there (big JSON pages, slow mirrors)."""

PROBE_TIMEOUT_S = 8.0
"""How long to wait before calling a page unreachable. A healthy server answers in well
under a second; uv, asked instead, would retry for many seconds per Python."""


class Unreachable(Exception):
    """The server could not be reached: nothing is known about the page."""

    def __init__(self, url: str, reason: str) -> None:
        super().__init__(f"{url} could not be reached ({reason})")
        self.url = url
        self.reason = reason
        """In a few words: ``Connection refused``, ``timed out``, ``Name or service not known``."""


class HttpError(Exception):
    """The server answered with an error status."""

    def __init__(self, url: str, status: int, reason: str) -> None:
        super().__init__(f"{url} answered HTTP {status} ({reason})")
        self.url = url
        self.status = status
        self.reason = reason


@dataclass(frozen=True)
class Response:
    status: int
    body: bytes
    headers: Mapping[str, str] = field(default_factory=dict)
    reason: str = ""


SLOW_NOTICE_S = 10.0
"""A read still waiting after this long says so, once: a server that accepts and never answers gave a minute or
more of silence before the kit gave up (two minutes where a page is asked twice)."""


def _say_on_stderr(message: str) -> None:
    print(f"kit: {message}", file=sys.stderr, flush=True)


notice: Callable[[str], None] = _say_on_stderr
"""Where that line goes (the command line's log)."""


@contextmanager
def _said_if_slow(url: str, timeout: float) -> Iterator[None]:
    if timeout <= SLOW_NOTICE_S:
        yield
        return
    timer = threading.Timer(SLOW_NOTICE_S, lambda: notice(
        f"still waiting for {url} after {SLOW_NOTICE_S:g} s (the kit gives up on it at {timeout:g} s)"))
    timer.daemon = True
    timer.start()
    try:
        yield
    finally:
        timer.cancel()


def get(url: str, headers: Mapping[str, str] | None = None, timeout: float = DEFAULT_TIMEOUT_S) -> Response:
    """GET ``url`` (http, https or file); the whole body. Raises `Unreachable` or `HttpError`.

    One line on stderr when it waits longer than `SLOW_NOTICE_S`."""
    with _said_if_slow(url, timeout):
        return _get(url, headers, timeout)


def _get(url: str, headers: Mapping[str, str] | None, timeout: float) -> Response:
    headers = dict(headers or {})
    if _kept_alive_possible(url):
        try:
            response = _KEPT.request("GET", url, headers, timeout)
        except (http.client.HTTPException, OSError) as exc:
            _raise_if_out_of_descriptors(exc)
            raise Unreachable(url, failure_reason(exc)) from None
        if response.status < 300:
            return response
        if response.status >= 400:
            raise HttpError(url, response.status, response.reason)
        # A redirect: urllib follows it.
    return _urllib("GET", url, headers, timeout)


def head(url: str, headers: Mapping[str, str] | None = None, timeout: float = PROBE_TIMEOUT_S) -> Response:
    """HEAD ``url`` on a fresh connection with a short timeout: is anyone there?"""
    return _urllib("HEAD", url, dict(headers or {}), timeout)


def read_range(url: str, start: int, end: int, timeout: float = DEFAULT_TIMEOUT_S) -> bytes:
    """Bytes ``start`` to ``end - 1`` of the file at ``url`` (a server that ignores ranges is sliced here)."""
    response = get(url, {"Range": f"bytes={start}-{end - 1}"}, timeout)
    return response.body[start:end] if response.status == 200 else response.body


def content_length(url: str, timeout: float = DEFAULT_TIMEOUT_S) -> int:
    """The size the server gives for ``url``; `HttpError` when it gives none."""
    response = _urllib("HEAD", url, {}, timeout)
    try:
        return int(response.headers["Content-Length"])
    except (KeyError, TypeError, ValueError):
        raise HttpError(url, response.status, "no Content-Length") from None


def unreachable(url: str, timeout: float = PROBE_TIMEOUT_S) -> str:
    """"" when a server answers for ``url`` at all (an error status is an answer); else why not, in a few words.

    For probing a page before something slower (uv) depends on it: only
    the network is judged here, not what the page holds.
    """
    try:
        head(url, timeout=timeout)
    except Unreachable as exc:
        return exc.reason
    except HttpError:
        pass
    return ""


def failure_reason(exc: BaseException) -> str:
    """A network failure in a few words (``Connection refused``), without errno numbers or class names."""
    reason = getattr(exc, "reason", exc)
    text = getattr(reason, "strerror", None) or str(reason)
    return text or type(reason).__name__


def _urllib(method: str, url: str, headers: dict[str, str], timeout: float) -> Response:
    try:
        request = urllib.request.Request(url, headers=headers, method=method)
        # A fresh opener reads the proxy settings now: urlopen's shared one keeps the first it saw.
        with urllib.request.build_opener().open(request, timeout=timeout) as response:
            body = response.read()
            status = getattr(response, "status", None) or 200  # file:// answers have no status
            return Response(status, body, dict(response.headers.items()), getattr(response, "reason", "") or "")
    except urllib.error.HTTPError as exc:  # the server answered, with an error
        raise HttpError(url, exc.code, str(exc.reason)) from None
    except (urllib.error.URLError, http.client.HTTPException, OSError, ValueError) as exc:
        _raise_if_out_of_descriptors(exc)
        raise Unreachable(url, failure_reason(exc)) from None


def _raise_if_out_of_descriptors(exc: BaseException) -> None:
    """The kit out of file descriptors (``ulimit -n``) is no network failure: the OSError goes on, to be said as
    such (`kit.errors.out_of_files`), not as a page out of reach (exit 4)."""
    cause = getattr(exc, "reason", exc)
    if isinstance(cause, OSError) and cause.errno in (errno.EMFILE, errno.ENFILE):
        raise cause from None


class _KeptAlive:
    """One kept-alive connection per host (http or https), used by one request at a time."""

    def __init__(self) -> None:
        self._connections: dict[tuple[str, str], http.client.HTTPConnection] = {}
        self._lock = threading.Lock()

    def request(self, method: str, url: str, headers: dict[str, str], timeout: float) -> Response:
        parts = urllib.parse.urlsplit(url)
        path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        key = (parts.scheme, parts.netloc)
        with self._lock:
            while True:
                connection = self._connections.get(key)
                kept = connection is not None
                if connection is None:
                    kind = http.client.HTTPSConnection if parts.scheme == "https" else http.client.HTTPConnection
                    connection = self._connections[key] = kind(parts.netloc, timeout=timeout)
                try:
                    connection.timeout = timeout  # for a (re)connect; a live socket is told below
                    if connection.sock is not None:
                        connection.sock.settimeout(timeout)
                    connection.request(method, path, headers=headers)
                    response = connection.getresponse()
                    body = response.read()
                    return Response(response.status, body, dict(response.getheaders()), response.reason)
                except (http.client.HTTPException, OSError) as exc:
                    connection.close()
                    del self._connections[key]
                    if not kept or isinstance(exc, socket.timeout):
                        raise  # a server that does not answer in time is not asked a second time as long
                    # A kept connection the server closed meanwhile: one more try on a new one.

    def close(self) -> None:
        with self._lock:
            for connection in self._connections.values():
                connection.close()
            self._connections.clear()


_KEPT = _KeptAlive()


def _kept_alive_possible(url: str) -> bool:
    """http(s) without a proxy: a bare connection would not honour proxy settings, urllib does."""
    return url.startswith(("https://", "http://")) and not urllib.request.getproxies()
