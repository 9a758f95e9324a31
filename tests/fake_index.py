"""A package index on 127.0.0.1 for tests: PEP 691 JSON pages from a table, and a port that refuses.

Fast and offline: the fault tests (index down, unknown release, index answered
but lacks wheels) talk to this instead of PyPI.
"""

from __future__ import annotations

import io
import json
import socket
import threading
import zipfile
from contextlib import contextmanager
from datetime import datetime, timedelta, timezone
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Iterator, Sequence

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


def wheel(name: str, version: str, requires: tuple[str, ...] = (), extras: tuple[str, ...] = ()) -> tuple[str, bytes]:
    """A tiny installable-looking wheel: just the metadata a resolver reads."""
    filename = f"{name}-{version}-py3-none-any.whl"
    metadata = ["Metadata-Version: 2.1", f"Name: {name}", f"Version: {version}"]
    metadata += [f"Provides-Extra: {extra}" for extra in extras]
    metadata += [f"Requires-Dist: {requirement}" for requirement in requires]
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as zf:
        info = f"{name}-{version}.dist-info"
        zf.writestr(f"{info}/METADATA", "\n".join(metadata) + "\n")
        zf.writestr(f"{info}/WHEEL", "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n")
        zf.writestr(f"{info}/RECORD", "")
    return filename, buffer.getvalue()


NUMPY_BEFORE_ALL = "2023-06-01T20:00:00Z"


def jax_releases(versions: Sequence[str], *, missing_jaxlib: Sequence[str] = (),
                 first_upload: datetime = datetime(2024, 1, 1, tzinfo=timezone.utc),
                 days_apart: int = 20, numpy_moves_at: str | None = None,
                 packages: Sequence[tuple[str, str, str]] = ()) -> tuple[Files, dict[str, bytes]]:
    """An index page and wheel files for these JAX releases, as the kit reads a real one.

    Each ``jax`` wheel's METADATA pins its own jaxlib through the ``cpu`` extra
    (as jax 0.4.x did) and asks for numpy, so the kit's planner, bisect's
    candidate list and uv all read the same answer from it; a release in
    ``missing_jaxlib`` has no jaxlib on the index (as PyPI pruned 0.4.14, 0.4.16
    and 0.4.17). Releases are uploaded ``days_apart`` days apart, oldest first,
    so each has its own era cut-off. scipy 1.11.2 and numpy 2.2.1 predate them
    all; numpy 2.2.2 is uploaded with release ``numpy_moves_at``, so the eras
    from then on resolve it instead (as numpy moved between jax 0.4.38 and 0.5.0).
    ``packages``: more projects, each ``(name, version, release)`` uploaded with
    that release (say flax 0.10.1 with jax 0.4.35), so each era has its own.
    """
    files: Files = {"jax": [], "jaxlib": [], "scipy": [("scipy-1.11.2-py3-none-any.whl", "2023-08-17T20:00:00Z")],
                    "numpy": [("numpy-2.2.1-py3-none-any.whl", NUMPY_BEFORE_ALL)]}
    blobs = dict([wheel("scipy", "1.11.2"), wheel("numpy", "2.2.1")])
    for number, version in enumerate(versions):
        uploaded = (first_upload + timedelta(days=days_apart * number)).strftime("%Y-%m-%dT%H:%M:%SZ")
        name, blob = wheel("jax", version, requires=(f'jaxlib=={version}; extra == "cpu"', "numpy>=1.22"),
                           extras=("cpu",))
        files["jax"].append((name, uploaded))
        blobs[name] = blob
        if version not in missing_jaxlib:
            name, blob = wheel("jaxlib", version)
            files["jaxlib"].append((name, uploaded))
            blobs[name] = blob
        if version == numpy_moves_at:
            name, blob = wheel("numpy", "2.2.2")
            files["numpy"].append((name, uploaded))
            blobs[name] = blob
        for project, project_version, with_release in packages:
            if with_release == version:
                name, blob = wheel(project, project_version)
                files.setdefault(project, []).append((name, uploaded))
                blobs[name] = blob
    return files, blobs


class ServedIndex:
    """The served URL, how many requests it answered, and its find-links page ``/archive/``."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.archive = url.replace("/simple", "/archive/")
        self.requests: list[str] = []


@contextmanager
def serve_index(files: Files = JAX_FILES, blobs: dict[str, bytes] | None = None,
                archive: tuple[str, ...] = (), requires_python: dict[str, str] | None = None) -> Iterator[ServedIndex]:
    """Serve ``/simple/<project>/`` as PEP 691 JSON (unknown projects are 404), ``/files/<name>``
    from ``blobs``, and ``/archive/``: a find-links page listing the ``archive`` files.
    ``requires_python``: a file's Requires-Python, listed on the page as PyPI does (uv reads it there)."""
    index: ServedIndex
    blobs = blobs or {}

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 - http.server's name
            index.requests.append(self.path)
            status, kind, body = self.answer()
            self.send_response(status)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(body)

        do_HEAD = do_GET  # noqa: N815

        def answer(self) -> tuple[int, str, bytes]:
            name = self.path.strip("/").split("/")[-1]
            if self.path.startswith("/simple/") and name in files:
                body = json.dumps({"meta": {"api-version": "1.1"}, "name": name, "files": [
                    {"filename": f, "url": f"/files/{f}", "hashes": {}, "upload-time": t,
                     **({"requires-python": (requires_python or {})[f]} if f in (requires_python or {}) else {})}
                    for f, t in files[name]]}).encode()
                return 200, "application/vnd.pypi.simple.v1+json", body
            if self.path.startswith("/files/") and name in blobs:
                return 200, "application/octet-stream", blobs[name]
            if self.path == "/archive/":
                links = "".join(f'<a href="/files/{f}">{f}</a><br>' for f in archive)
                return 200, "text/html", f"<html><body>{links}</body></html>".encode()
            return 404, "text/plain", b"not found"

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    index = ServedIndex(f"http://127.0.0.1:{server.server_address[1]}/simple")
    # A short poll: shutdown() waits for it, and the drivers' suites start an index per test.
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
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
