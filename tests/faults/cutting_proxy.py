"""A proxy on 127.0.0.1 in front of a served index that passes pages whole and cuts every wheel mid-body.

What a dropped connection looks like to uv: the file's headers promise N
bytes, half of them come, then the connection closes ("error decoding
response body ... end of file before message length reached"). With
``metadata``, the pages offer each wheel's METADATA on its own (PEP 658, as
PyPI does) and the proxy serves it whole, so uv resolves without a download
and the cut lands in the install, as it does against PyPI.
"""

from __future__ import annotations

import hashlib
import io
import json
import threading
import urllib.request
import zipfile
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Iterator


def _fetch(url: str) -> tuple[bytes, str]:
    with urllib.request.urlopen(url, timeout=10) as answer:  # noqa: S310 - loopback only
        return answer.read(), answer.headers.get("Content-Type", "")


def _with_metadata(page: bytes, upstream: str) -> bytes:
    """The page with each wheel's METADATA offered on its own and its sha256 listed, as PyPI's pages have them
    (without the hash uv downloads the wheel to hash it)."""
    data = json.loads(page)
    for item in data.get("files", []):
        if item["filename"].endswith(".whl"):
            item["core-metadata"] = True
            item["hashes"] = {"sha256": hashlib.sha256(_fetch(upstream + item["url"])[0]).hexdigest()}
    return json.dumps(data).encode()


def _metadata_of(wheel: bytes) -> bytes:
    with zipfile.ZipFile(io.BytesIO(wheel)) as zf:
        return zf.read(next(name for name in zf.namelist() if name.endswith(".dist-info/METADATA")))


@contextmanager
def cutting_proxy(upstream: str, metadata: bool = False, status: int | None = None) -> Iterator[str]:
    """Serve ``upstream`` (a served index's ``http://127.0.0.1:PORT``) through a proxy; yield the proxy's root URL.

    ``status``: answer every wheel with that error (a 503 from a proxy or a mirror in trouble) instead of cutting it.
    """

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 - http.server's name
            if status is not None and self.path.startswith("/files/") and not self.path.endswith(".metadata"):
                self.send_error(status)
                return
            cut = False
            if self.path.endswith(".whl.metadata"):
                body, kind = _metadata_of(_fetch(upstream + self.path[:-len(".metadata")])[0]), "text/plain"
            else:
                body, kind = _fetch(upstream + self.path)
                cut = self.path.startswith("/files/")
                if metadata and self.path.startswith("/simple/"):
                    body = _with_metadata(body, upstream)
            self.send_response(200)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Connection", "close")
            self.end_headers()
            if self.command == "HEAD":
                return
            self.wfile.write(body[:len(body) // 2] if cut else body)  # the connection drops mid-file
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
