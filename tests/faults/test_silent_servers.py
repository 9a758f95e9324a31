"""A server that accepts and never answers: a line saying what the kit waits for, and one wait, not two.

The index's pages are probed (HEAD, 8 s) before anything depends on them,
but a server that answers the probe and then never answers a page's GET left
a minute of silence per read, and a kept-alive connection's timeout was tried
once more on a new one (two minutes, 140 s with the probe and nox). An issue
read from GitHub behind a silent proxy waited the same 60 s. Now a read
waiting past `kit.http.SLOW_NOTICE_S` says so, a timeout is not retried, and
GitHub's API gets 15 s. docs/faults.md, "Network".
"""

from __future__ import annotations

import threading
import time
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Iterator

import pytest

from kit import http
from kit.triage import issue_source


@contextmanager
def answers_head_never_get() -> Iterator[tuple[str, list[str]]]:
    """A server on 127.0.0.1 that answers HEAD at once and never answers a GET (until the test ends)."""
    done = threading.Event()
    gets: list[str] = []

    class Handler(BaseHTTPRequestHandler):
        def do_HEAD(self) -> None:  # noqa: N802 - http.server's name
            self.send_response(200)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def do_GET(self) -> None:  # noqa: N802
            gets.append(self.path)
            done.wait(30)

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", gets
    finally:
        done.set()
        server.shutdown()
        server.server_close()


@pytest.mark.real_time  # waits out a real time limit
def test_a_read_that_waits_long_says_so_and_a_timeout_is_not_asked_twice(monkeypatch: pytest.MonkeyPatch) -> None:
    said: list[str] = []
    monkeypatch.setattr(http, "SLOW_NOTICE_S", 0.3)
    monkeypatch.setattr(http, "notice", said.append)
    with answers_head_never_get() as (root, gets):
        http.head(f"{root}/simple/jax/")  # the probe is answered
        started = time.monotonic()
        with pytest.raises(http.Unreachable, match="timed out"):
            http.get(f"{root}/simple/jax/", timeout=1.5)
        took = time.monotonic() - started
    assert said == [f"still waiting for {root}/simple/jax/ after 0.3 s (the kit gives up on it at 1.5 s)"]
    assert gets == ["/simple/jax/"]
    assert took < 10  # one wait of 1.5 s, whatever the machine's load


@pytest.mark.real_time  # waits out a real time limit
def test_a_kept_connection_that_times_out_is_not_tried_again() -> None:
    with answers_head_never_get() as (root, gets):
        # Keep a connection to the server first (a HEAD through the kept-alive pool), then time a GET out on it.
        kept = http._KeptAlive()
        try:
            kept.request("HEAD", f"{root}/", {}, 5)
            with pytest.raises(OSError):
                kept.request("GET", f"{root}/simple/jax/", {}, 0.5)
        finally:
            kept.close()
    assert gets == ["/simple/jax/"]  # was: asked twice, the second time on a new connection


def test_githubs_api_is_given_seconds_not_the_indexs_minute() -> None:
    asked: dict[str, Any] = {}

    def get(url: str, headers: Any = None, **kwargs: Any) -> http.Response:
        asked.update(kwargs)
        raise http.Unreachable(url, "timed out")

    with pytest.raises(issue_source.IssueUnreachable):
        issue_source.read_github_issue("jax-ml/jax#25329", get)
    assert asked["timeout"] == issue_source.ISSUE_TIMEOUT_S == 15.0
