"""Faults of this machine, not the release: a cut download, a full disk, a cache uv cannot write. Never a record.

Each was a `not-installable` record before (the matrix cell flipped, nox exit
0): uv's failure was read as the index's answer about the release. Now a cut
download is the network's (exit 4), a folder uv could not write is this
machine's (exit 1, naming the folder and what sets it), and a half-built
environment is removed. Real uv, a real index on 127.0.0.1
(`tests.fake_index`), real tmpfs mounts where the test may mount them (root);
docs/faults.md, "Local faults".
"""

from __future__ import annotations

import io
import os
import subprocess
import sys
import zipfile
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

import pytest

from kit.install import envs, uv_failures
from kit.errors import IndexUnreachable, MachineUnwritable
from tests.fake_index import jax_releases, serve_index
from tests.faults.cutting_proxy import cutting_proxy
from tests.faults.kit_commands import ROOT, run_kit

PYTHON = f"{sys.version_info.major}.{sys.version_info.minor}"  # an interpreter uv can build a venv with here

# uv retries a failed download three times, waiting between tries; the fault is the same each time.
QUICK_UV = {"UV_HTTP_RETRIES": "0"}
# A caller's terminal width, exported (a shell, pytest-xdist's workers): uv wraps an error's causes at it,
# which split the long path the kit reads out of uv's words over lines until uv_env dropped it.
NARROW = {"COLUMNS": "60"}


def write_matrix(folder: Path, index_url: str, more: str = "") -> None:
    (folder / "matrix.toml").write_text(
        f'[kit]\nresults_dir = "results"\nenvs_dir = "envs"\n[install]\nindex_url = "{index_url}"\n'
        f'pythons = ["{PYTHON}"]\njaxlib_archive = ""\n[[release]]\nversion = "0.6.0"\n[checks.scaling]\n{more}',
        encoding="utf-8")


def no_records(folder: Path) -> bool:
    results = folder / "results"
    return not results.exists() or not any(results.iterdir())


def heavy_jaxlib(megabytes: int = 3) -> tuple[str, bytes]:
    """A jaxlib 0.6.0 wheel with a few MB of data in it: more than the small folders below can hold."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as zf:
        zf.writestr("jaxlib/payload.bin", os.urandom(megabytes * 1_000_000))
        zf.writestr("jaxlib-0.6.0.dist-info/METADATA", "Metadata-Version: 2.1\nName: jaxlib\nVersion: 0.6.0\n")
        zf.writestr("jaxlib-0.6.0.dist-info/WHEEL",
                    "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n")
        zf.writestr("jaxlib-0.6.0.dist-info/RECORD", "")
    return "jaxlib-0.6.0-py3-none-any.whl", buffer.getvalue()


@contextmanager
def small_folder(path: Path, size: str = "1m", read_only: bool = False) -> Iterator[Path]:
    """``path`` as a tmpfs of ``size`` (read-only when asked); skipped where this test may not mount one."""
    path.mkdir(parents=True, exist_ok=True)
    options = f"size={size}" + (",ro" if read_only else "")
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(path)], capture_output=True,
                             text=True) if sys.platform == "linux" and os.geteuid() == 0 else None
    if mounted is None or mounted.returncode != 0:
        pytest.skip("needs a small tmpfs (mount -t tmpfs as root) to be full or read-only for real: "
                    + (mounted.stderr.strip() if mounted is not None else "not root, or not Linux"))
    try:
        yield path
    finally:
        subprocess.run(["umount", "-l", str(path)], check=False)


@pytest.mark.parametrize("where", ["resolve", "install"])
def test_a_download_cut_mid_file_is_exit_4_and_no_record(tmp_path: Path, where: str) -> None:
    # A proxy on 127.0.0.1 that passes the index's pages and drops every wheel's connection half-way. With each
    # wheel's METADATA on its own (PEP 658, as on PyPI), uv resolves without a download and the cut comes in the
    # install; without, uv downloads the wheels to resolve.
    with serve_index(*jax_releases(["0.6.0"])) as served:
        with cutting_proxy(served.url.rsplit("/simple", 1)[0], metadata=where == "install") as proxy:
            write_matrix(tmp_path, f"{proxy}/simple")
            proc, _took = run_kit(tmp_path, "run", "scaling", "0.6.0", UV_CACHE_DIR=str(tmp_path / "uv"), **QUICK_UV)
    assert proc.returncode == 4, proc.stdout + proc.stderr
    error = next(line for line in proc.stderr.splitlines() if line.startswith("ERROR:"))
    assert error.startswith("ERROR: uv's connection to the package index was cut off while it downloaded ")
    assert error.endswith(" (end of file before message length reached)")
    assert ("installing jax==0.6.0" in proc.stderr) == (where == "install")
    assert "NOT INSTALLABLE" not in proc.stdout
    assert no_records(tmp_path)
    assert not (tmp_path / "envs").exists() or not [path for path in (tmp_path / "envs").iterdir() if path.is_dir()
                                                     and path.name != "resolutions"]  # no half-built environment


@pytest.mark.parametrize("where", ["resolve", "install"])
def test_a_server_error_for_a_wheel_is_exit_4_and_no_record(tmp_path: Path, where: str) -> None:
    # A proxy (or a mirror in trouble) answering 503 for every wheel: a server's failure, not the release's.
    with serve_index(*jax_releases(["0.6.0"])) as served:
        with cutting_proxy(served.url.rsplit("/simple", 1)[0], metadata=where == "install", status=503) as proxy:
            write_matrix(tmp_path, f"{proxy}/simple")
            proc, _took = run_kit(tmp_path, "run", "scaling", "0.6.0", UV_CACHE_DIR=str(tmp_path / "uv"), **QUICK_UV)
    assert proc.returncode == 4, proc.stdout + proc.stderr
    error = next(line for line in proc.stderr.splitlines() if line.startswith("ERROR:"))
    assert error.startswith(f"ERROR: {proxy}/files/")
    assert error.endswith(" answered uv with HTTP 503 (Service Unavailable): the server's failure says nothing about "
                          "the release")
    assert "NOT INSTALLABLE" not in proc.stdout  # was: "no installed Python (3.11) can install it", a record
    assert no_records(tmp_path)


def test_a_full_environments_folder_is_exit_1_naming_it_and_the_half_built_environment_is_removed(
        tmp_path: Path) -> None:
    files, blobs = jax_releases(["0.6.0"])
    blobs.update([heavy_jaxlib()])
    with small_folder(tmp_path / "envs") as envs, serve_index(files, blobs) as served:
        write_matrix(tmp_path, served.url)
        proc, _took = run_kit(tmp_path, "run", "scaling", "0.6.0", UV_CACHE_DIR=str(tmp_path / "uv"), **QUICK_UV)
        left = sorted(path.name for path in envs.iterdir())
    assert proc.returncode == 1, proc.stdout + proc.stderr
    error = next(line for line in proc.stderr.splitlines() if line.startswith("ERROR:"))
    assert error.startswith("ERROR: could not build the environment jax-0.6.0-cpu-py")
    assert error.endswith(f" in {envs} (No space left on device): the half-built environment was removed, and "
                          "nothing was recorded (this machine's fault, not the release's)")
    assert f"TIP: free some space in {envs}" in proc.stderr
    assert "jaxlib wheel" not in proc.stdout + proc.stderr  # was: advice to supply one
    # Left: the lock, the note of why the build failed (for a builder that waited on it), the resolutions.
    assert [name for name in left if not name.endswith((".lock", ".failed.json")) and name != "resolutions"] == []
    assert no_records(tmp_path)


def test_a_sweep_stops_at_a_full_environments_folder_with_exit_1(tmp_path: Path) -> None:
    files, blobs = jax_releases(["0.6.0", "0.6.1"])
    blobs.update([heavy_jaxlib()])
    with small_folder(tmp_path / "envs"), serve_index(files, blobs) as served:
        write_matrix(tmp_path, served.url, '[[release]]\nversion = "0.6.1"\n')
        proc, _took = run_kit(tmp_path, "matrix", UV_CACHE_DIR=str(tmp_path / "uv"), **QUICK_UV)
    assert proc.returncode == 1, proc.stdout + proc.stderr  # was: exit 0, the cells "not installable"
    assert "this machine could not build an environment, so the sweep stopped with 1 cell not run" in proc.stderr
    assert "ERROR in scaling · jax 0.6.0: could not build the environment jax-0.6.0-cpu-py" in proc.stderr
    assert no_records(tmp_path)


@contextmanager
def unwritable_folder(path: Path) -> Iterator[tuple[Path, str]]:
    """``path`` that this user cannot write, and the OS's words for it: a read-only tmpfs as root (root writes
    through any mode), a folder without write permission otherwise."""
    if os.geteuid() == 0:
        with small_folder(path, read_only=True) as folder:
            yield folder, "Read-only file system"
        return
    path.mkdir(parents=True, exist_ok=True)
    path.chmod(0o555)
    try:
        yield path, "Permission denied"
    finally:
        path.chmod(0o755)


@contextmanager
def full_or_unwritable(path: Path, fault: str) -> Iterator[tuple[Path, str]]:
    if fault == "a-file":  # UV_CACHE_DIR naming a file
        path.write_text("notes\n")
        yield path, "a file is where a folder should be"
    elif fault == "full":
        with small_folder(path) as folder:
            yield folder, "No space left on device"
    else:
        with unwritable_folder(path) as (folder, words):
            yield folder, words


@pytest.mark.parametrize("fault", ["full", "unwritable", "a-file"])
def test_a_uv_cache_that_cannot_be_written_is_exit_1_naming_uv_cache_dir(tmp_path: Path, fault: str) -> None:
    files, blobs = jax_releases(["0.6.0"])
    blobs.update([heavy_jaxlib()])
    with full_or_unwritable(tmp_path / "uv", fault) as (cache, words), serve_index(files, blobs) as served:
        write_matrix(tmp_path, served.url)
        proc, _took = run_kit(tmp_path, "run", "scaling", "0.6.0", UV_CACHE_DIR=str(cache), **QUICK_UV, **NARROW)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert (f"ERROR: uv could not write its cache {cache} ({words}; UV_CACHE_DIR={cache}): this is this machine's "
            "fault, not the release's, so nothing was recorded") in proc.stderr.splitlines()
    assert "no installed Python" not in proc.stdout + proc.stderr  # was: the release's "not installable"
    assert no_records(tmp_path)


def test_a_home_that_cannot_be_written_names_home_where_uv_keeps_its_cache(tmp_path: Path) -> None:
    with unwritable_folder(tmp_path / "home") as (home, words), serve_index(*jax_releases(["0.6.0"])) as served:
        write_matrix(tmp_path, served.url)
        env = {name: os.environ[name] for name in os.environ if name not in ("UV_CACHE_DIR", "XDG_CACHE_HOME")}
        proc = subprocess.run([sys.executable, "-m", "kit", "run", "scaling", "0.6.0"], cwd=tmp_path,
                              capture_output=True, text=True, timeout=120,
                              env={**env, **QUICK_UV, **NARROW, "HOME": str(home), "PYTHONPATH": str(ROOT),
                                   "KIT_CACHE_DIR": str(tmp_path / "kit-cache")})
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert (f"ERROR: uv could not write its cache {home}/.cache/uv ({words}; the cache HOME={home} "
            "puts there; UV_CACHE_DIR is not set): this is this machine's fault, not the release's, so nothing was "
            "recorded") in proc.stderr.splitlines()
    assert no_records(tmp_path)


# uv 0.13's own words, as captured from the runs above: what each is read as, without uv or a mount.
CUT = ("error: Failed to download `jax==0.6.0`\n  cause: Failed to write to the distribution cache\n"
       "  cause: error decoding response body\n  cause: request or response body error\n"
       "  cause: error reading a body from connection\n  cause: end of file before message length reached\n")
FULL = ("error: Failed to install: jaxlib-0.6.0-py3-none-any.whl (jaxlib==0.6.0)\n"
        "  cause: Failed to copy to `/e/jax-0.6.0-cpu/lib/python3.11/site-packages/jaxlib/payload.bin`\n"
        "  cause: failed to copy file from /c/archive-v0/x/jaxlib/payload.bin to "
        "/e/jax-0.6.0-cpu/lib/python3.11/site-packages/jaxlib/.tmpoehOMQ: No space left on device (os error 28)\n")
READ_ONLY = ("error: Failed to initialize cache at `ro/c`\n"
             "  cause: failed to create directory `/ro/c`: Read-only file system (os error 30)\n")
A_FILE = ("error: Failed to initialize cache at `afile`\n"
          "  cause: failed to create directory `/tmp/afile`: File exists (os error 17)\n")


def test_uvs_words_for_each_local_fault_are_read_as_this_machines() -> None:
    with pytest.raises(IndexUnreachable, match=r"cut off while it downloaded jax==0\.6\.0 \(end of file"):
        uv_failures.raise_if_this_machine(CUT)
    with pytest.raises(MachineUnwritable, match=r"^could not build the environment jax-0\.6\.0-cpu in /e "
                                                r"\(No space left on device\)"):
        uv_failures.raise_if_this_machine(FULL, Path("/e/jax-0.6.0-cpu"), environ={"UV_CACHE_DIR": "/c"})
    with pytest.raises(MachineUnwritable, match=r"^uv could not write its cache /ro/c \(Read-only file system; "
                                                r"UV_CACHE_DIR=/ro/c\)"):
        uv_failures.raise_if_this_machine(READ_ONLY, environ={"UV_CACHE_DIR": "/ro/c"})
    with pytest.raises(MachineUnwritable, match=r"^uv could not write its cache /tmp/afile \(a file is where a folder "
                                                r"should be; UV_CACHE_DIR=/tmp/afile\)"):
        uv_failures.raise_if_this_machine(A_FILE, environ={"UV_CACHE_DIR": "/tmp/afile"})
    uv_failures.raise_if_this_machine("error: Because jaxlib==0.4.16 has no wheels ... (os error 2)")  # the index's


def test_a_folder_of_the_kit_it_cannot_write_is_one_sentence_not_a_traceback(tmp_path: Path) -> None:
    # Any file the kit keeps (here the index's cache, KIT_CACHE_DIR) on a folder that refuses it: the command
    # line's last resort names the file.
    with unwritable_folder(tmp_path / "ro") as (folder, words), serve_index(*jax_releases(["0.6.0"])) as served:
        write_matrix(tmp_path, served.url)
        proc, _took = run_kit(tmp_path, "plan", "0.6.0", KIT_CACHE_DIR=str(folder / "kit"),
                              UV_CACHE_DIR=str(tmp_path / "uv"), **QUICK_UV)
    fix = {"Read-only file system": f"make {folder} writable", "Permission denied": f"let this user read and write {folder}"}
    assert proc.returncode == 1, proc.stderr
    assert proc.stderr.splitlines()[-2:] == [
        f"ERROR: the kit could not use {folder / 'kit'} ({words}): this machine's fault, not a result, so the run "
        "that needed it recorded nothing",
        f"TIP: {fix[words]}, then run the same command again"]
    assert "Traceback" not in proc.stderr


@pytest.mark.parametrize("words", ["  cause: dns error: failed to lookup address information", CUT.split("\n", 1)[1]],
                         ids=["out-of-reach", "cut-off"])
def test_a_managed_python_the_network_did_not_bring_is_exit_4_not_a_release_that_cannot_install(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, words: str) -> None:
    # A stand-in uv: no such Python installed, and its download fails as uv's does when the network does.
    uv = tmp_path / "uv"
    said = "".join(f"echo '{line}' >&2; " for line in ["error: Failed to download cpython-3.99.0", *words.splitlines()])
    uv.write_text(f'#!/bin/sh\ncase "$2" in find) exit 2 ;; install) {said}exit 1 ;; esac\n')
    uv.chmod(0o755)
    monkeypatch.setattr(envs, "find_interpreter", lambda version: None)
    monkeypatch.setattr(envs, "find_uv", lambda: str(uv))
    with pytest.raises(IndexUnreachable) as stopped:  # was: InstallFailed, a `not-installable` record
        envs.find_or_fetch_interpreter("3.99", lambda line: None)
    assert str(stopped.value).startswith("this release needs Python 3.99, which is not installed here, and uv could "
                                         "not download it over the network (")


def test_an_environments_folder_that_cannot_be_written_is_exit_1_naming_it(tmp_path: Path) -> None:
    # envs_dir on a read-only mount (or without write permission): the folder, or the build's lock beside it,
    # cannot be made. Was: an OSError traceback, or in a sweep a traceback per cell.
    with unwritable_folder(tmp_path / "envs") as (envs, words), serve_index(*jax_releases(["0.6.0"])) as served:
        write_matrix(tmp_path, served.url)
        proc, _took = run_kit(tmp_path, "run", "scaling", "0.6.0", UV_CACHE_DIR=str(tmp_path / "uv"), **QUICK_UV)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    error = next(line for line in proc.stderr.splitlines() if line.startswith("ERROR:"))
    assert error.startswith("ERROR: could not build the environment jax-0.6.0-cpu-py")
    assert error.endswith(f" in {envs} ({words}): nothing was built or recorded (this machine's fault, not the "
                          "release's)")
    assert "Traceback" not in proc.stderr
    assert no_records(tmp_path)
