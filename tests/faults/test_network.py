"""Faults: the network. An outage says nothing about a release: exit 4, one sentence naming the page, no record.

Every page an install depends on follows the index's rule: the index, extra
indexes and find-links pages from matrix.toml or ``--find-links``, JAX's page
of CUDA jaxlibs, JAX's archive of pruned jaxlibs (that one in
tests/test_install_release.py: uv must first find the index lacks the jaxlib).
The unreachable addresses are real: a local port nothing listens on
(connections refused at once), or a proxy on one.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from kit import cli, exit_codes
from kit.install import pages, plan as install
from tests.faults.kit_commands import run_kit
from tests.fake_index import JAX_FILES, serve_index, wheel

NOWHERE = "http://127.0.0.1:9"  # the discard port: nothing listens there, connections are refused
IN_SECONDS = 20.0  # before the probe, uv spent 78 s retrying one page for five Pythons


def write_matrix(folder: Path, index_url: str, version: str, install_extra: str = "") -> Path:
    path = folder / "matrix.toml"
    path.write_text(f'[kit]\nresults_dir = "results"\nenvs_dir = "envs"\n'
                    f'[install]\nindex_url = "{index_url}"\npythons = ["3.11"]\njaxlib_archive = ""\n{install_extra}'
                    f'[[release]]\nversion = "{version}"\n[checks.scaling]\n', encoding="utf-8")
    return path


@pytest.fixture(autouse=True)
def pages_not_heard_from(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pages, "_ANSWERED", set())
    monkeypatch.setattr(pages, "_SILENT", {})


def test_jaxs_cuda_page_out_of_reach_is_exit_4_not_not_installable(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    # nox -s plan -- 0.4.18 --backend cuda: jax 0.4.18's cuda12_pip extra resolves only against JAX's CUDA page.
    cuda_page = f"{NOWHERE}/jax_cuda_releases.html"
    monkeypatch.setattr(install, "JAX_CUDA_ARCHIVE_PAGE", cuda_page)
    monkeypatch.setattr(pages, "JAX_CUDA_ARCHIVE_PAGE", cuda_page)
    monkeypatch.setattr(install, "_resolve", lambda *args: pytest.fail("uv must not be asked"))
    monkeypatch.setenv("KIT_CACHE_DIR", str(tmp_path / "cache"))
    jax = dict([wheel("jax", "0.4.18", extras=("cpu", "cuda12_pip"))])
    with serve_index(JAX_FILES, jax) as served:
        matrix = write_matrix(tmp_path, served.url, "0.4.18")
        started = time.monotonic()
        code = cli.main(["plan", "0.4.18", "--backend", "cuda"], matrix_path=str(matrix))
        took = time.monotonic() - started
    out, err = capsys.readouterr()
    assert code == exit_codes.EXIT_NETWORK == 4
    assert err.splitlines()[0] == (f"ERROR: jax 0.4.18 needs JAX's page of CUDA jaxlibs {cuda_page} to install, "
                                   "and it could not be reached over the network (Connection refused)")
    assert err.splitlines()[1].startswith("TIP: check the network (and HTTPS_PROXY)")
    assert "NOT INSTALLABLE" not in out
    assert took < IN_SECONDS


@pytest.mark.parametrize("setting", ["find_links", "extra_index_urls"])
def test_a_page_from_matrix_toml_out_of_reach_is_exit_4_and_no_record(tmp_path: Path, setting: str) -> None:
    page = f"{NOWHERE}/wheels/"
    with serve_index() as served:
        write_matrix(tmp_path, served.url, "0.6.0", f'{setting} = ["{page}"]\n')
        proc, took = run_kit(tmp_path, "run", "scaling", "0.6.0")
    assert proc.returncode == 4, proc.stderr
    assert (f"ERROR: jax 0.6.0 needs the page {page} to install, and it could not be reached over the network "
            "(Connection refused)") in proc.stderr.splitlines()
    assert "Traceback" not in proc.stderr
    assert not (tmp_path / "results").exists() or not any((tmp_path / "results").iterdir())
    assert took < IN_SECONDS


def test_a_find_links_page_given_on_the_command_line_out_of_reach_is_exit_4(tmp_path: Path) -> None:
    page = f"{NOWHERE}/pruned/jaxlib.html"
    with serve_index() as served:
        write_matrix(tmp_path, served.url, "0.6.0")
        proc, took = run_kit(tmp_path, "plan", "0.6.0", "--find-links", page)
    assert proc.returncode == 4, proc.stderr
    assert f"needs the page {page} to install" in proc.stderr
    assert took < IN_SECONDS


def test_the_index_behind_a_proxy_that_refuses_is_exit_4_naming_the_index(tmp_path: Path) -> None:
    # How users and the tests cut the network: a proxy on a port nothing listens on.
    write_matrix(tmp_path, "https://pypi.org/simple", "0.6.0")
    cut = {name: NOWHERE for name in ("HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy")}
    proc, took = run_kit(tmp_path, "plan", "0.6.0", **cut, NO_PROXY="", no_proxy="")
    assert proc.returncode == 4, proc.stderr
    assert proc.stderr.splitlines()[0] == (
        "ERROR: jax 0.6.0 needs the package index to resolve its install, and https://pypi.org/simple/jax/ "
        "could not be reached over the network (Connection refused)")
    assert took < IN_SECONDS
