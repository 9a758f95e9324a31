"""Out of file descriptors (``ulimit -n 16``, ``bisect --jobs 3``): one sentence, exit 1, never a traceback or a verdict.

The limit hits wherever the kit next opens something: a pipe for uv or the
check, the check's result file, the child that asks whether JAX runs. Each
of these used to be an `OSError(24)` traceback, or a record blaming the run
(`KIT_RESULT could not be read (Too many open files)`, a crash). Real limits
(`resource.setrlimit`), in a child process or around one call. docs/faults.md,
"Processes".
"""

from __future__ import annotations

import os
import subprocess
import sys
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

import pytest

from kit import http
from kit.errors import OutOfFiles, out_of_files
from kit.run import result_files
from tests.fake_index import jax_releases, serve_index
from tests.faults.kit_commands import ROOT

resource = pytest.importorskip("resource", reason="file descriptor limits are a Unix setting")


def write_matrix(folder: Path, index_url: str) -> None:
    (folder / "matrix.toml").write_text(
        f'[kit]\nresults_dir = "results"\nenvs_dir = "envs"\n[install]\nindex_url = "{index_url}"\n'
        'pythons = ["3.11"]\njaxlib_archive = ""\n[[release]]\nversion = "0.6.0"\n[checks.scaling]\n', encoding="utf-8")


def test_a_command_out_of_file_descriptors_is_one_sentence_with_the_limit(tmp_path: Path) -> None:
    def eight_files() -> None:  # Python starts in 3; the index's connection and uv's pipes need more
        resource.setrlimit(resource.RLIMIT_NOFILE, (8, resource.getrlimit(resource.RLIMIT_NOFILE)[1]))

    with serve_index(*jax_releases(["0.6.0"])) as served:
        write_matrix(tmp_path, served.url)
        proc = subprocess.run([sys.executable, "-m", "kit", "plan", "0.6.0"], cwd=tmp_path, capture_output=True,
                              text=True, timeout=120, preexec_fn=eight_files,
                              env={**os.environ, "PYTHONPATH": str(ROOT), "KIT_CACHE_DIR": str(tmp_path / "cache"),
                                   "UV_CACHE_DIR": str(tmp_path / "uv")})
    assert proc.returncode == 1, proc.stderr
    assert proc.stderr.splitlines()[-2:] == [
        "ERROR: the kit ran out of file descriptors (Too many open files: its limit, ulimit -n, is 8): this machine's "
        "limit, not a result, so the run that needed one recorded nothing",
        "TIP: raise the limit (ulimit -n 4096) or run fewer probes at once (--jobs 1), then run the same command again"]
    assert "Traceback" not in proc.stderr


@contextmanager
def no_file_left_to_open() -> Iterator[None]:
    """The soft limit set to the lowest free descriptor: the next open fails with EMFILE, as under ``ulimit -n``."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    probe = os.open(os.devnull, os.O_RDONLY)
    os.close(probe)
    resource.setrlimit(resource.RLIMIT_NOFILE, (probe, hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


def test_a_result_file_the_kit_could_not_open_is_no_crash_of_the_run(tmp_path: Path) -> None:
    result = tmp_path / "result.json"
    result.write_text('{"verdict": "unaffected"}', encoding="utf-8")
    with no_file_left_to_open(), pytest.raises(OutOfFiles) as raised:
        result_files.read_json_object(result, "KIT_RESULT")
    # was: ResultFileError("KIT_RESULT could not be read (Too many open files)"), a `crashed` record
    assert str(raised.value).startswith("the kit ran out of file descriptors (Too many open files: its limit, ulimit "
                                        "-n, is ")
    assert result_files.read_json_object(result, "KIT_RESULT") == {"verdict": "unaffected"}


@pytest.mark.parametrize("read", ["get", "probe"])
def test_a_socket_the_kit_could_not_open_is_no_page_out_of_reach(read: str) -> None:
    with serve_index(*jax_releases(["0.6.0"])) as served:
        url = f"{served.url}/jax/"
        with no_file_left_to_open(), pytest.raises(OSError) as raised:
            http.get(url) if read == "get" else http.unreachable(url)
    # was: Unreachable("... could not be reached (Too many open files)"), exit 4 as if the index were down
    assert not isinstance(raised.value, http.Unreachable)
    assert OutOfFiles is type(out_of_files(raised.value))
