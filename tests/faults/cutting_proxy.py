"""A proxy on 127.0.0.1 in front of a served index that passes pages whole and cuts every file mid-body.

What a dropped connection looks like to uv: the file's headers promise N
bytes, half of them come, then the connection closes ("error decoding
response body ... end of file before message length reached").
"""

from __future__ import annotations

import threading
import urllib.request
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Iterator


@contextmanager
def cutting_proxy(upstream: str) -> Iterator[str]:
    """Serve ``upstream`` (a served index's ``http://127.0.0.1:PORT``) through a proxy; yield the proxy's root URL."""
    cuts: list[str] = []

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 - http.server's name
            with urllib.request.urlopen(upstream + self.path, timeout=10) as answer:  # noqa: S310 - loopback only
                body, kind = answer.read(), answer.headers.get("Content-Type", "")
            self.send_response(200)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Connection", "close")
            self.end_headers()
            if self.command == "HEAD":
                return
            if self.path.startswith("/files/"):
                cuts.append(self.path)
                body = body[:len(body) // 2]  # the connection drops mid-file
            self.wfile.write(body)
            self.wfile.flush()
            self.close_connection = True

        do_HEAD = do_GET  # noqa: N815

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
