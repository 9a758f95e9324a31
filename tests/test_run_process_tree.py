"""kit/run/process_tree.py: a check's tree marked by its tag, found through /proc, killed and reaped.

Called here directly with trees started by hand; a check's own hostile trees run in
tests/faults/test_child_processes.py.
"""

from __future__ import annotations

import ctypes
import os
import subprocess
import sys
from pathlib import Path

import pytest

from kit.run.process_tree import TREE_ENV, Subreaper, end_trees, tagged_env
from tests.process_state import ended_soon

ROOT = Path(__file__).resolve().parents[1]
linux_only = pytest.mark.skipif(sys.platform != "linux", reason="the tree is found through Linux's /proc")

# Forks a grandchild that calls setsid (out of the root's group and session), prints its pid, then waits.
ROOT_WITH_ESCAPEE = """
import os, sys, time
r, w = os.pipe()
if os.fork() == 0:
    os.setsid()
    os.write(w, str(os.getpid()).encode())
    time.sleep(120)
    os._exit(0)
print(os.read(r, 32).decode(), flush=True)
time.sleep(120)
"""


def _is_subreaper() -> bool:
    flag = ctypes.c_int(-1)
    assert ctypes.CDLL(None, use_errno=True).prctl(37, ctypes.byref(flag), 0, 0, 0) == 0
    return flag.value == 1


def test_tagged_env_adds_the_token_without_an_empty_part() -> None:
    # A leading ":" would be a token "" that every untagged process's empty entry could match.
    assert tagged_env({"A": "1"}, "t1") == {"A": "1", TREE_ENV: "t1"}
    assert tagged_env({TREE_ENV: ""}, "t1")[TREE_ENV] == "t1"


def test_tagged_env_keeps_an_outer_kits_token_and_the_callers_mapping() -> None:
    # A kit running inside a check: both trees must find the process.
    outer = {TREE_ENV: "outer"}
    assert tagged_env(outer, "inner")[TREE_ENV] == "outer:inner"
    assert outer == {TREE_ENV: "outer"}


@linux_only
def test_end_trees_kills_a_root_and_the_descendant_that_left_its_session() -> None:
    token = "feedfacefeedface"
    with subprocess.Popen([sys.executable, "-c", ROOT_WITH_ESCAPEE], env=tagged_env(os.environ, token),
                          stdout=subprocess.PIPE, text=True, start_new_session=True) as proc:
        assert proc.stdout is not None
        escapee = int(proc.stdout.readline())
        [leftovers] = end_trees([(proc.pid, token)])
        assert proc.wait(timeout=10) < 0
    assert leftovers == [f"pid {escapee} ({Path(sys.executable).name[:15]})"]  # comm: the name exec was given
    assert ended_soon(escapee)


@linux_only
def test_a_process_outside_the_tree_is_left_alone() -> None:
    # Same user, no tag, its own session: ending one tree must not reach a neighbour.
    neighbour = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"], start_new_session=True)
    root = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"],
                            env=tagged_env(os.environ, "0123456789abcdef"), start_new_session=True)
    try:
        assert end_trees([(root.pid, "0123456789abcdef")]) == [[]]
        assert root.wait(timeout=10) < 0
        assert neighbour.poll() is None
    finally:
        for proc in (neighbour, root):
            proc.kill()
            proc.wait()


@linux_only
def test_the_kit_is_spared_even_when_it_carries_the_token() -> None:
    # A kit run inside a check carries that check's token: ending the tree must not kill the kit itself.
    code = ("import subprocess, sys, os\n"
            "from kit.run.process_tree import end_trees, tagged_env\n"
            "root = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'], start_new_session=True,\n"
            "                        env=tagged_env(os.environ, 'abcdabcdabcdabcd'))\n"
            "end_trees([(root.pid, 'abcdabcdabcdabcd')])\n"
            "print('alive', root.wait(timeout=10))\n")
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=tagged_env(os.environ, "abcdabcdabcdabcd"),
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["alive", "-9"]


@linux_only
def test_a_grace_lets_the_root_end_on_sigterm() -> None:
    # With a grace the root gets SIGTERM first: a handler that exits cleanly is honoured.
    code = ("import signal, sys, time\nsignal.signal(signal.SIGTERM, lambda *_: sys.exit(5))\n"
            "print('ready', flush=True)\ntime.sleep(60)\n")
    with subprocess.Popen([sys.executable, "-c", code], env=tagged_env(os.environ, "1111222233334444"),
                          stdout=subprocess.PIPE, text=True, start_new_session=True) as proc:
        assert proc.stdout is not None
        assert proc.stdout.readline() == "ready\n"
        end_trees([(proc.pid, "1111222233334444")], grace_s=5)
        assert proc.wait(timeout=10) == 5


@linux_only
def test_the_subreaper_is_on_while_any_holder_is_and_never_counts_below_zero() -> None:
    reaper = Subreaper()
    before = _is_subreaper()
    try:
        reaper.acquire()
        reaper.acquire()
        reaper.release()
        assert _is_subreaper()  # one holder left
        reaper.release()
        assert not _is_subreaper()
        reaper.release()  # an extra release must not make the next acquire a no-op
        reaper.acquire()
        assert _is_subreaper()
        reaper.release()
        assert not _is_subreaper()
    finally:
        if before:
            reaper.acquire()
