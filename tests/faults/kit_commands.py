"""The kit's command line run as a user runs it, for the fault tests that need a whole process."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def run_kit(folder: Path, *argv: str, **env: str) -> tuple[subprocess.CompletedProcess[str], float]:
    """``python -m kit ARGV`` from ``folder`` (its matrix.toml), as a user runs it; and its wall time."""
    started = time.monotonic()
    proc = subprocess.run([sys.executable, "-m", "kit", *argv], cwd=folder, capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(ROOT), "KIT_CACHE_DIR": str(folder / "cache"), **env},
                          timeout=120)
    return proc, time.monotonic() - started
