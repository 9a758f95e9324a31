"""kit.install.wheel_metadata: METADATA out of a wheel with a few range reads, checked against real zips."""

from __future__ import annotations

import io
import threading
import zipfile
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from kit.install.wheel_metadata import NotAWheel, read_zip_member, remote_metadata

METADATA = "Metadata-Version: 2.1\nName: jax\nVersion: 0.4.20\nRequires-Dist: jaxlib ==0.4.20 ; extra == 'cpu'\n"


def wheel(compression: int, padding: int = 0, comment: bytes = b"") -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=compression) as zf:
        zf.writestr("jax/__init__.py", "x = 1\n" * 10)
        if padding:
            zf.writestr("jax/big.bin", bytes(range(256)) * (padding // 256))
        zf.writestr("jax-0.4.20.dist-info/METADATA", METADATA)
        zf.writestr("jax-0.4.20.dist-info/RECORD", "")
        zf.comment = comment
    return buffer.getvalue()


class Ranges:
    def __init__(self, data: bytes) -> None:
        self.data, self.calls = data, []  # type: ignore[var-annotated]

    def __call__(self, start: int, end: int) -> bytes:
        self.calls.append((start, end))
        return self.data[start:end]


@pytest.mark.parametrize("compression", [zipfile.ZIP_DEFLATED, zipfile.ZIP_STORED])
@pytest.mark.parametrize("padding", [0, 300_000])  # the METADATA member right in the tail, or far before it
def test_metadata_is_read_with_few_ranges(compression: int, padding: int) -> None:
    data = wheel(compression, padding)
    fetch = Ranges(data)
    assert read_zip_member(len(data), fetch, ".dist-info/METADATA").decode() == METADATA
    assert len(fetch.calls) <= 2
    assert sum(end - start for start, end in fetch.calls) < 70_000 + len(METADATA) + 2_000


def test_a_zip_comment_does_not_hide_the_directory() -> None:
    data = wheel(zipfile.ZIP_DEFLATED, comment=b"PK note " * 100)
    assert read_zip_member(len(data), Ranges(data), ".dist-info/METADATA").decode() == METADATA


def test_not_a_zip_is_named() -> None:
    data = b"<html>not a wheel</html>"
    with pytest.raises(NotAWheel, match="end-of-central-directory"):
        read_zip_member(len(data), Ranges(data), ".dist-info/METADATA")


def test_missing_member_is_named() -> None:
    data = wheel(zipfile.ZIP_DEFLATED)
    with pytest.raises(NotAWheel, match="no member ending in .dist-info/WHEEL"):
        read_zip_member(len(data), Ranges(data), ".dist-info/WHEEL")


class _Wheels(BaseHTTPRequestHandler):
    """Serves one wheel, honouring Range requests only under /ranges/."""

    data = wheel(zipfile.ZIP_DEFLATED)

    def do_GET(self) -> None:  # noqa: N802 (http.server's name)
        spec = self.headers.get("Range", "")
        if self.path.startswith("/ranges/") and spec.startswith("bytes="):
            start, end = (int(x) for x in spec[len("bytes="):].split("-"))
            body, status = self.data[start : end + 1], 206
        else:
            body, status = self.data, 200
        self.send_response(status)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.mark.parametrize("path", ["/ranges/jax.whl", "/whole/jax.whl"])
def test_metadata_over_http_with_and_without_range_support(path: str) -> None:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Wheels)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        url = f"http://127.0.0.1:{server.server_port}{path}"
        assert remote_metadata(url, len(_Wheels.data), pep658=False) == METADATA
    finally:
        server.shutdown()
        server.server_close()
