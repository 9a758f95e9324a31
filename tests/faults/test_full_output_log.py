"""A program's output log on a full disk (``TMPDIR`` on a small tmpfs): the pipe is still drained.

/dev/full refuses every write with ENOSPC, as a full tmpfs does. The log is
where an explained program's output goes and a probe's log (`script_runs.run_child`
with ``output_log``).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from kit.run import script_runs

pytestmark = pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full to fill a disk for real")

SIX_MB = "for i in range(100000): print('x' * 60)"


def test_a_program_printing_6_mb_into_a_full_log_runs_to_its_end_and_the_loss_is_said() -> None:
    said: list[str] = []
    # Was: the reading thread died at the first refused write, the program blocked on its full pipe until the
    # timeout (60 s here), and closing the log raised OSError out of run_child: a traceback.
    ended = script_runs.run_child([sys.executable, "-c", SIX_MB], 60, said.append, output_log=Path("/dev/full"),
                             echo=False)
    assert not ended.timed_out and ended.code == 0
    assert ended.tail[-1] == "x" * 60  # the output tail is still read
    assert said == ["the output log /dev/full could not take 100000 line(s) (6100000 bytes) of the output (No space "
                    "left on device): they were read and dropped, so the run went on; the output tail is kept"]


def test_a_log_that_cannot_even_be_made_counts_every_line(tmp_path: Path) -> None:
    said: list[str] = []
    ended = script_runs.run_child([sys.executable, "-c", "print('a'); print('b')"], 60, said.append,
                             output_log=tmp_path / "no" / "such" / "folder.log", echo=False)
    assert ended.code == 0 and ended.tail == ["a", "b"]
    assert "could not take 2 line(s) (4 bytes) of the output (No such file or directory)" in said[0]
