"""A package index on 127.0.0.1 for tests: PEP 691 JSON pages from a table, and a port that refuses.

Fast and offline: the fault tests (index down, unknown release, index answered
but lacks wheels) talk to this instead of PyPI.
"""

from __future__ import annotations

import json
import socket
import threading
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Iterator

# project -> [(filename, upload time)]
Files = dict[str, list[tuple[str, str]]]

JAX_FILES: Files = {
    "jax": [("jax-0.4.13.tar.gz", "2023-06-22T20:00:00Z"),
            ("jax-0.4.16-py3-none-any.whl", "2023-09-18T20:00:00Z"),
            ("jax-0.4.18-py3-none-any.whl", "2023-10-06T20:00:00Z"),
            ("jax-0.6.0-py3-none-any.whl", "2025-04-16T20:00:00Z")],
    "jaxlib": [("jaxlib-0.4.13-cp311-cp311-manylinux2014_x86_64.whl", "2023-06-22T20:00:00Z"),
               ("jaxlib-0.4.18-cp311-cp311-manylinux2014_x86_64.whl", "2023-10-06T20:00:00Z"),
               ("jaxlib-0.6.0-cp312-cp312-manylinux2014_x86_64.whl", "2025-04-16T20:00:00Z")],
}


class FakeIndex:
    """The served URL and how many requests it answered."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.requests: list[str] = []


@contextmanager
def serve_index(files: Files = JAX_FILES) -> Iterator[FakeIndex]:
    """Serve ``/simple/<project>/`` as PEP 691 JSON; unknown projects are 404."""
    index: FakeIndex

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 - http.server's name
            index.requests.append(self.path)
            name = self.path.strip("/").split("/")[-1]
            if self.path.startswith("/simple/") and name in files:
                body = json.dumps({"meta": {"api-version": "1.1"}, "name": name, "files": [
                    {"filename": f, "url": f"/files/{f}", "hashes": {}, "upload-time": t}
                    for f, t in files[name]]}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/vnd.pypi.simple.v1+json")
            else:
                body = b"not found"
                self.send_response(404)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    index = FakeIndex(f"http://127.0.0.1:{server.server_address[1]}/simple")
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield index
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def refused_url() -> str:
    """An index URL on a loopback port that nothing listens on: connections are refused."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}/simple"
