"""A check run by hand where jax imports but no backend starts (a CUDA build without its driver, issue 27 item 8):
``kitcheck.finish`` still writes the verdict, with the JAX version only (it raised from ``jax.devices()`` and the
verdict was lost). docs/faults.md, "Inputs".
"""

from __future__ import annotations

import json
import subprocess
import sys
import os
from pathlib import Path

from tests.test_kitcheck_outside import KIT_ROOT, _clean_env, _project


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
