"""kit.http: reads, ranges and probes against real local servers; failures as one sentence."""

from __future__ import annotations

import socket
import threading
import time
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Iterator

import pytest

from kit import http
from tests.fake_index import refused_url

BODY = bytes(range(256)) * 4


class _Files(BaseHTTPRequestHandler):
    """HTTP/1.1 with keep-alive: ``/ranges/`` honours Range, ``/whole/`` ignores it, anything else is 404."""

    protocol_version = "HTTP/1.1"
    connections: set[int] = set()

    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        self.connections.add(self.client_address[1])  # one client port per connection
        spec = self.headers.get("Range", "")
        if self.path.startswith("/ranges/") and spec.startswith("bytes="):
            start, end = (int(x) for x in spec[len("bytes="):].split("-"))
            status, body = 206, BODY[start : end + 1]
        elif self.path.startswith(("/ranges/", "/whole/")):
            status, body = 200, BODY
        else:
            status, body = 404, b"no such file"
        self.send_response(status)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    do_HEAD = do_GET  # noqa: N815

    def log_message(self, *args: object) -> None:
        pass


@contextmanager
def serve() -> Iterator[str]:
    _Files.connections = set()
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Files)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}"
    finally:
        http._KEPT.close()
        server.shutdown()
        server.server_close()


@contextmanager
def silent_server() -> Iterator[str]:
    """A port that accepts connections (the kernel's backlog) and never answers: a stalled proxy or server."""
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(8)
        yield f"http://127.0.0.1:{listener.getsockname()[1]}/page"


@pytest.fixture(autouse=True)
def no_proxy_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy",
                 "NO_PROXY", "no_proxy"):
        monkeypatch.delenv(name, raising=False)


def test_reads_go_over_one_kept_alive_connection_per_host() -> None:
    with serve() as url:
        for _ in range(5):
            assert http.get(f"{url}/whole/a.whl").body == BODY
        assert http.read_range(f"{url}/ranges/a.whl", 10, 20) == BODY[10:20]
        assert len(_Files.connections) == 1


def test_a_server_that_ignores_ranges_is_sliced_here() -> None:
    with serve() as url:
        assert http.read_range(f"{url}/whole/a.whl", 100, 104) == BODY[100:104]
        assert http.content_length(f"{url}/whole/a.whl") == len(BODY)


def test_an_error_status_is_an_answer_with_its_code() -> None:
    with serve() as url:
        with pytest.raises(http.HttpError, match=r"/missing answered HTTP 404 \(Not Found\)$") as failed:
            http.get(f"{url}/missing")
        assert failed.value.status == 404
        assert http.unreachable(f"{url}/missing") == ""  # someone answered: the network is fine


def test_a_refused_connection_is_one_sentence_naming_the_url() -> None:
    url = refused_url() + "/jax/"
    with pytest.raises(http.Unreachable) as failed:
        http.get(url)
    assert str(failed.value) == f"{url} could not be reached (Connection refused)"
    assert http.unreachable(url) == "Connection refused"


@pytest.mark.real_time  # waits out a real time limit
def test_a_server_that_never_answers_is_unreachable_after_the_probe_timeout() -> None:
    with silent_server() as url:
        started = time.monotonic()
        assert http.unreachable(url, timeout=0.5) == "timed out"
        assert time.monotonic() - started < 5


def test_the_proxy_is_read_at_each_request(monkeypatch: pytest.MonkeyPatch) -> None:
    # HTTP(S)_PROXY is how users and the tests cut the network, also in a process that already read pages.
    with serve() as url:
        assert http.get(f"{url}/whole/a.whl").body == BODY
        monkeypatch.setenv("HTTP_PROXY", "http://127.0.0.1:9")
        with pytest.raises(http.Unreachable, match=r"could not be reached \(Connection refused\)"):
            http.get(f"{url}/whole/a.whl")  # not over the connection kept from before the proxy was set
        assert http.unreachable(f"{url}/whole/a.whl") == "Connection refused"


def test_files_are_read_too(tmp_path: Path) -> None:
    saved = tmp_path / "CHANGELOG.md"
    saved.write_text("## jax 0.5.3\n")
    assert http.get(saved.as_uri()).body == b"## jax 0.5.3\n"
    with pytest.raises(http.Unreachable, match="No such file or directory"):
        http.get((tmp_path / "nowhere.md").as_uri())
