"""A check run by hand where jax imports but no backend starts (a CUDA build without its driver):
``kitcheck.finish`` still writes the verdict, with the JAX version only (it raised from ``jax.devices()`` and the
verdict was lost). docs/faults.md, "Inputs".
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

KIT_ROOT = Path(__file__).resolve().parent.parent.parent

SCRIPT = """\
from repro import kitcheck

kitcheck.finish("affected", "sum is slow", summary={"n": 1000})
"""


def _project(tmp_path: Path) -> Path:
    """The user's own project, far from the kit."""
    script = tmp_path / "myproject" / "sum_check.py"
    script.parent.mkdir(parents=True)
    script.write_text(SCRIPT)
    return script


def _clean_env(**extra: str) -> dict[str, str]:
    return {**{k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "KIT_RESULT")}, **extra}


def test_a_jax_whose_backend_cannot_start_still_gets_its_verdict_written(tmp_path: Path) -> None:
    """Run by hand where jax imports but no backend starts (a CUDA build without its driver)."""
    script = _project(tmp_path)
    fake = tmp_path / "fake" / "jax"
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text("__version__ = '0.6.0'\n\ndef devices():\n    raise RuntimeError('no backend')\n")
    result = tmp_path / "result.json"
    done = subprocess.run([sys.executable, str(script)], cwd=tmp_path, capture_output=True, text=True, timeout=60,
                          env=_clean_env(PYTHONPATH=f"{tmp_path / 'fake'}{os.pathsep}{KIT_ROOT}",
                                         KIT_RESULT=str(result)))
    assert done.returncode == 1, done.stderr
    assert json.loads(result.read_text())["environment"] == {"jax": "0.6.0"}
