"""The kit's site folders (explain's, a target's) run the sitecustomize they hide: the interpreter's own still
happens, also when both kit folders stand on PYTHONPATH together."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("folders", [["explain_site"], ["target_site"], ["explain_site", "target_site"]])
def test_the_interpreters_own_sitecustomize_still_runs(tmp_path: Path, folders: list[str]) -> None:
    own = tmp_path / "own"
    own.mkdir()
    (own / "sitecustomize.py").write_text("import sys\nprint('own sitecustomize ran', file=sys.stderr)\n")
    path = [str(ROOT / "repro" / name) for name in folders] + [str(ROOT), str(own)]
    env = {k: v for k, v in os.environ.items() if not k.startswith(("KIT_", "PYTHON"))}
    env["PYTHONPATH"] = os.pathsep.join(path)
    ended = subprocess.run([sys.executable, "-c", "pass"], env=env, cwd=tmp_path, capture_output=True, text=True,
                           timeout=60)
    assert ended.returncode == 0, ended.stderr
    assert ended.stderr.count("own sitecustomize ran") == 1, ended.stderr


def test_without_the_repro_package_the_skip_is_said(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("KIT_", "PYTHON"))}
    env["PYTHONPATH"] = str(ROOT / "repro" / "target_site")  # the repository root, with repro, is missing
    ended = subprocess.run([sys.executable, "-c", "pass"], env=env, cwd=tmp_path, capture_output=True, text=True,
                           timeout=60)
    assert ended.returncode == 0
    assert "cannot run the sitecustomize this one hides" in ended.stderr
