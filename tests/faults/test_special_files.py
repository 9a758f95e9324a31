"""A named pipe or a device where the kit reads back a JSON file (docs/faults.md, "Values and records"): a probe
cache entry, a lock, a plot manifest or a runnable pair that is a FIFO is one sentence, never a read that waits
forever (nothing ever writes to it) or one that never ends (``/dev/zero``)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

READ = """
import sys
from pathlib import Path
from kit.records import JsonTextError, read_json
try:
    read_json(Path(sys.argv[1]))
except JsonTextError as error:
    print(error)
"""


def _read_in_child(path: Path) -> str:
    # A child, so that a read that blocks fails this test at its timeout instead of hanging the suite.
    done = subprocess.run([sys.executable, "-c", READ, str(path)], cwd=ROOT, capture_output=True, text=True,
                          timeout=20)
    return done.stdout.strip()


def test_a_named_pipe_is_refused_without_being_opened(tmp_path: Path) -> None:
    fifo = tmp_path / "0.6.0-cpu-abc.json"
    os.mkfifo(fifo)
    assert _read_in_child(fifo) == "unreadable: not a regular file (a pipe, a device or a socket)"


@pytest.mark.skipif(not Path("/dev/zero").exists(), reason="no /dev/zero here")
def test_a_link_to_dev_zero_is_refused_not_read_without_end(tmp_path: Path) -> None:
    link = tmp_path / "manifest.json"
    link.symlink_to("/dev/zero")
    assert _read_in_child(link) == "unreadable: not a regular file (a pipe, a device or a socket)"
