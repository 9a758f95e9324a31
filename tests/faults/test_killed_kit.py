"""A kit killed outright (``kill -9``, the OOM killer): its check does not run on as an orphan without a timeout.

Nothing unwinds in a kit killed by SIGKILL, so the kernel ends the check's
own process with it (PR_SET_PDEATHSIG, `kit.run.process_tree.die_with_the_kit`),
and the next kit, before its first check, ends what that process had started
(found by the dead kit's pid in each process's ``KIT_PROCESS_TREE``:
`process_tree.end_abandoned`). Real processes; docs/faults.md, "Processes".
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.process_state import ended_soon, pids_written, running

# Serial, in the integration lane (which runs one test at a time): any kit on the machine ends a dead kit's
# leftovers, so in the machine lane's parallel workers another test's kit could end them before "the next kit"
# here does, and its message would be missing (seen twice).
pytestmark = [pytest.mark.skipif(sys.platform != "linux", reason="PR_SET_PDEATHSIG and /proc are Linux's"),
              pytest.mark.integration, pytest.mark.serial]

ROOT = Path(__file__).resolve().parents[2]

# The kit as a user runs it: one script check, a 600 s timeout.
KIT = """
import sys
from pathlib import Path
from kit import cli
from kit.check_settings import script_check
from kit.install.environment import REUSED, Environment
from kit.run import script_runs
env = Environment(python=Path(sys.executable), versions={}, obtained=REUSED)
with cli.unwind_on_stop_signals():
    script_runs.run_script(env, script_check("c", Path(sys.argv[1])), "cpu", 600, print)
"""

# A check that starts a helper (a plain fork: same session, same group) and both wait for ten minutes.
FORK_AND_SLEEP = """
import os, sys, time
helper = os.fork()
if helper == 0:
    time.sleep(600)
    os._exit(0)
open(PIDS + ".tmp", "w").write(f"{os.getpid()} {helper}")
os.rename(PIDS + ".tmp", PIDS)
time.sleep(600)
"""


def start_kit(tmp_path: Path, body: str, name: str) -> subprocess.Popen[str]:
    script = tmp_path / f"{name}.py"
    script.write_text(body)
    return subprocess.Popen([sys.executable, "-c", KIT, str(script)], cwd=ROOT, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)


def test_a_kit_killed_outright_takes_its_check_along_and_the_next_kit_ends_the_rest(tmp_path: Path) -> None:
    pid_file = tmp_path / "pids"
    killed = start_kit(tmp_path, f"PIDS = {str(pid_file)!r}\n" + FORK_AND_SLEEP, "first")
    check, helper = pids_written(pid_file, 2)
    try:
        killed.send_signal(signal.SIGKILL)
        killed.communicate(timeout=30)
        assert ended_soon(check), "the check ran on after its kit was killed (was: an orphan with no timeout)"
        assert running(helper)  # re-parented to init: only the next kit can find it
        following = start_kit(tmp_path, "print('the next check')\n", "second")
        output, _ = following.communicate(timeout=120)
        assert following.returncode == 0, output
        assert ended_soon(helper), "the next kit left the killed kit's helper running"
        assert f"ended 1 process that a kit killed earlier (kill -9) had left running: pid {helper} (python" in output
    finally:
        for pid in (check, helper):
            if running(pid):
                os.kill(pid, signal.SIGKILL)


def test_a_running_kits_checks_are_never_taken_for_a_dead_kits(tmp_path: Path) -> None:
    pid_file = tmp_path / "pids"
    alive = start_kit(tmp_path, f"PIDS = {str(pid_file)!r}\n" + FORK_AND_SLEEP, "first")
    check, helper = pids_written(pid_file, 2)
    try:
        following = start_kit(tmp_path, "print('the next check')\n", "second")
        output, _ = following.communicate(timeout=120)
        assert following.returncode == 0, output
        assert running(check)
        assert running(helper)
        assert "killed earlier" not in output
    finally:
        alive.send_signal(signal.SIGTERM)
        alive.communicate(timeout=30)
        assert ended_soon(check)
        assert ended_soon(helper)
