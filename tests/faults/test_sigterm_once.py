"""A grace's SIGTERM reaches each process of a tree once: a second one killed a handler's clean exit.

The root was signalled through its group and then again by its pid. Python resets signal handlers
to the default while it finalises, so a second SIGTERM that lands during the exit the first one
started ends the process with -15 instead of its handler's exit code. That takes the kit being
descheduled between the two sends (seen under load, in tests/test_run_process_tree.py); here the
sends themselves are counted, so the test does not depend on the timing.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections import Counter

import pytest

from kit.run import process_tree
from kit.run.process_tree import end_trees, tagged_env

TOKEN = "5555666677778888"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the tree is read from /proc")
def test_a_grace_sends_each_process_one_sigterm(monkeypatch: pytest.MonkeyPatch) -> None:
    code = ("import signal, subprocess, sys, time\n"
            "signal.signal(signal.SIGTERM, lambda *_: sys.exit(5))\n"
            "child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'])\n"
            "print(child.pid, flush=True)\n"
            "time.sleep(60)\n")
    sent: Counter[int] = Counter()
    real_kill, real_killpg = os.kill, os.killpg

    def kill(pid: int, sig: int) -> None:
        if sig == signal.SIGTERM:
            sent[pid] += 1
        real_kill(pid, sig)

    def killpg(group: int, sig: int) -> None:
        if sig == signal.SIGTERM:
            for pid in members:
                sent[pid] += 1
        real_killpg(group, sig)

    monkeypatch.setattr(process_tree.os, "kill", kill)
    monkeypatch.setattr(process_tree.os, "killpg", killpg)
    with subprocess.Popen([sys.executable, "-c", code], env=tagged_env(os.environ, TOKEN),
                          stdout=subprocess.PIPE, text=True, start_new_session=True) as proc:
        assert proc.stdout is not None
        members = [proc.pid, int(proc.stdout.readline())]  # both in the root's group
        end_trees([(proc.pid, TOKEN)], grace_s=5)
        proc.wait(timeout=10)
    assert [sent[pid] for pid in members] == [1, 1]
