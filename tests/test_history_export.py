"""kit.history.export: a commit's chosen files into a folder; a partial clone fetches them in one request."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from fake_jax import FIX_TITLE, commit_titled, make_repo
from kit.history.export import export_files, is_partial
from kit.history.source import History, open_history


def test_export_writes_only_what_is_wanted(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "jax")
    history = History(repo, "test")
    written = export_files(history, "jax-v0.2.0", ["jax", "jaxlib"], tmp_path / "out",
                           wanted=lambda path: not path.endswith(".cc"))
    assert "jax/version.py" in written
    assert "jaxlib/lapack.py" in written
    assert "jaxlib/kernels.cc" not in written
    assert (tmp_path / "out" / "jaxlib" / "lapack.py").read_text() == "SUPPORTS_BATCH = True\n"
    assert not (tmp_path / "out" / "CHANGELOG.md").exists()
    assert is_partial(history) is None


def test_partial_clone_fetches_the_missing_contents_in_one_request(tmp_path: Path) -> None:
    upstream = make_repo(tmp_path / "upstream")
    history = open_history(None, "", tmp_path / "jax.git", print, remote=upstream.as_uri())
    assert is_partial(history) == "origin"
    fix = commit_titled(upstream, FIX_TITLE)
    trace = tmp_path / "trace"
    os.environ["GIT_TRACE2_EVENT"] = str(trace)  # every git process appends its events here
    try:
        export_files(history, fix, ["jax"], tmp_path / "out")
    finally:
        del os.environ["GIT_TRACE2_EVENT"]
    assert "USES_BATCH_RULE = True" in (tmp_path / "out" / "jax" / "_src" / "linalg.py").read_text()
    fetches = [line for line in trace.read_text().splitlines() if '"event":"start"' in line and '"fetch"' in line]
    assert len(fetches) == 1, fetches  # not one lazy fetch per file
    missing = subprocess.run(["git", "-C", str(history.path), "rev-list", "--objects", "--missing=print", f"{fix}:jax"],
                             capture_output=True, text=True).stdout
    assert "?" not in missing
