"""A reader that goes away (`jax-kit known | head -2`): the kit stops quietly, as a shell tool does, not with two
tracebacks (one from the print, one from Python's flush at exit)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_a_closed_pipe_ends_the_listing_without_a_traceback() -> None:
    with subprocess.Popen([sys.executable, "-m", "kit", "known"], cwd=ROOT, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, bufsize=0) as child:
        assert child.stdout is not None and child.stderr is not None
        first = child.stdout.read(64)
        child.stdout.close()  # as head does after its lines
        said = child.stderr.read().decode()
        code = child.wait(timeout=120)
    assert first and "Traceback" not in said and "BrokenPipeError" not in said, said
    assert code in (0, 141)  # 0 where the listing fitted the pipe's buffer before it closed
