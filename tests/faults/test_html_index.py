"""An index that serves only the HTML simple pages (PEP 503): one sentence, never a JSONDecodeError traceback.

The kit reads the JSON simple API (PEP 691): only it gives each file's
upload time, which cuts off a release's era. An index without it is named as
such, exit 2 (the index the user configured cannot be read), and nothing is
resolved. docs/faults.md, "Network".
"""

from __future__ import annotations

import threading
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Iterator

import pytest

from kit import cli, exit_codes
from kit.install import pages


@contextmanager
def html_only_index(body: bytes, kind: str = "text/html", status: int = 200) -> Iterator[str]:
    """An index on 127.0.0.1 answering every project page with ``body`` (and ``status``), whatever is accepted."""

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 - http.server's name
            self.send_response(status)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(body)

        do_HEAD = do_GET  # noqa: N815

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/simple"
    finally:
        server.shutdown()
        server.server_close()


def write_matrix(folder: Path, index_url: str, version: str) -> Path:
    path = folder / "matrix.toml"
    path.write_text(f'[kit]\nresults_dir = "results"\nenvs_dir = "envs"\n[install]\nindex_url = "{index_url}"\n'
                    f'pythons = ["3.11"]\njaxlib_archive = ""\n[[release]]\nversion = "{version}"\n[checks.scaling]\n',
                    encoding="utf-8")
    return path


PEP_503 = (b'<!DOCTYPE html>\n<html><body><h1>Links for jax</h1>\n'
           b'<a href="/files/jax-0.6.0-py3-none-any.whl#sha256=00" data-requires-python="&gt;=3.10">'
           b'jax-0.6.0-py3-none-any.whl</a><br/>\n</body></html>\n')


@pytest.fixture(autouse=True)
def pages_not_heard_from(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(pages, "_ANSWERED", set())
    monkeypatch.setattr(pages, "_SILENT", {})
    monkeypatch.setenv("KIT_CACHE_DIR", str(tmp_path / "cache"))


def test_an_index_of_html_pages_only_is_one_sentence_naming_pep_691(tmp_path: Path,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    with html_only_index(PEP_503) as url:
        matrix = write_matrix(tmp_path, url, "0.6.0")
        code = cli.main(["plan", "0.6.0"], matrix_path=str(matrix))
    err = capsys.readouterr().err
    assert code == exit_codes.EXIT_USAGE
    assert err.splitlines() == [
        f"ERROR: {url}/jax/ answered with an HTML page (PEP 503), not the JSON simple API (PEP 691) the kit reads: "
        "only the JSON pages give each file's upload time, which cuts off a release's era",
        "TIP: point install.index_url in matrix.toml at an index that serves the JSON simple API (PEP 691), as PyPI "
        "and most mirrors do"]


def test_a_page_that_is_json_but_no_project_page_is_named_too(tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    with html_only_index(b'["not", "a", "page"]', kind="application/json") as url:
        matrix = write_matrix(tmp_path, url, "0.6.0")
        code = cli.main(["plan", "0.6.0"], matrix_path=str(matrix))
    err = capsys.readouterr().err
    assert code == exit_codes.EXIT_USAGE
    assert err.startswith(f"ERROR: {url}/jax/ answered with something other than a project page of the JSON simple "
                          "API (PEP 691): b'[\"not\", \"a\", \"page\"]'")


def test_an_index_answering_with_a_server_error_is_exit_4_not_a_wrong_index_url(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # A mirror (or a proxy) in trouble: 503 for every page. It said "check install.index_url", exit 2.
    with html_only_index(b"Service Unavailable", kind="text/plain", status=503) as url:
        matrix = write_matrix(tmp_path, url, "0.6.0")
        code = cli.main(["plan", "0.6.0"], matrix_path=str(matrix))
    err = capsys.readouterr().err
    assert code == exit_codes.EXIT_NETWORK
    assert err.splitlines()[0] == (f"ERROR: {url}/jax/ answered with HTTP 503 (Service Unavailable): the index, or a "
                                   "proxy before it, is failing, which says nothing about the release")
