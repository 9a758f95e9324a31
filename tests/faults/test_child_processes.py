"""Hostile check scripts and their processes (docs/faults.md, "Processes"): real scripts, real processes.

Each script writes the pids of what it started to a file; the test then looks
for those pids in /proc. This interpreter stands in for a release's python.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from kit.check_settings import script_check
from kit.install.environment import REUSED, Environment
from kit.run import child_processes, multiprocess, script_runs
from tests.process_state import ended_soon, pids_written, running

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="the process tree is found through Linux's /proc")

ROOT = Path(__file__).resolve().parents[2]

FORK_AND_HOLD_STDOUT = """
import os, sys, time
pid = os.fork()
if pid == 0:
    time.sleep(120)   # holds the inherited stdout: the kit's pipe stays open
    os._exit(0)
open(sys.argv[1], "w").write(str(pid))
print("parent exits, child", pid, "sleeps 120 s", flush=True)
"""

FORK_AND_WAIT = """
import os, sys, time
pid = os.fork()
if pid == 0:
    time.sleep(120)
    os._exit(0)
open(sys.argv[1], "w").write(f"{os.getpid()} {pid}")
os.waitpid(pid, 0)
"""

# setsid + double fork + stdio to /dev/null: a classic daemon, out of the check's session and group.
DETACH = """
import os, sys, time
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        null = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(null, fd)
        open(sys.argv[1] + ".tmp", "w").write(str(os.getpid()))
        os.rename(sys.argv[1] + ".tmp", sys.argv[1])
        time.sleep(120)
        os._exit(0)
    os._exit(0)
while not os.path.exists(sys.argv[1]):
    time.sleep(0.01)
"""

# Out of the session but still holding the kit's pipe: reading must not wait for it either.
DETACH_HOLDING_STDOUT = DETACH.replace("for fd in (0, 1, 2)", "for fd in (0,)")


def _script(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "check.py"
    path.write_text(body)
    return path


def _env(tmp_path: Path) -> Environment:
    return Environment(python=Path(sys.executable), versions={}, obtained=REUSED)


def _run_script(tmp_path: Path, body: str, timeout: int) -> tuple[dict, float, Path]:
    pid_file = tmp_path / "pids"
    script = _script(tmp_path, body.replace("sys.argv[1]", repr(str(pid_file))))
    started = time.monotonic()
    fields = script_runs.run_script(_env(tmp_path), script_check("c", script), "cpu", timeout, lambda _m: None)
    return fields, time.monotonic() - started, pid_file


def test_a_forked_child_holding_stdout_ends_when_the_script_exits(tmp_path: Path) -> None:
    fields, seconds, pid_file = _run_script(tmp_path, FORK_AND_HOLD_STDOUT, timeout=60)
    assert seconds < 20, f"the check waited {seconds:.0f} s on its child's pipe"
    assert (fields.status, fields.verdict) == ("ran", "unaffected")
    assert "left 1 process running when it exited, killed then" in fields.reason
    assert fields.evidence["left_running_count"] == 1
    [child] = pids_written(pid_file)
    assert ended_soon(child)


def test_a_script_waiting_on_its_child_times_out_at_its_limit_with_the_child(tmp_path: Path) -> None:
    fields, seconds, pid_file = _run_script(tmp_path, FORK_AND_WAIT, timeout=3)
    assert fields.status == "timed-out"
    assert fields.reason == "the script did not finish within 3 s"
    assert seconds < 20
    assert all(ended_soon(pid) for pid in pids_written(pid_file, 2))


@pytest.mark.parametrize("body", [DETACH, DETACH_HOLDING_STDOUT], ids=["stdio-to-devnull", "holding-stdout"])
def test_a_detached_daemon_does_not_outlive_the_check(tmp_path: Path, body: str) -> None:
    fields, seconds, pid_file = _run_script(tmp_path, body, timeout=60)
    assert seconds < 20
    assert (fields.status, fields.verdict) == ("ran", "unaffected")
    [daemon] = pids_written(pid_file)
    assert ended_soon(daemon)
    assert fields.evidence["left_running_count"] == 1


def test_a_process_the_check_did_not_start_is_left_alone(tmp_path: Path) -> None:
    bystander = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"], start_new_session=True)
    try:
        fields, _seconds, _pid_file = _run_script(tmp_path, DETACH, timeout=60)
        assert fields.status == "ran"
        assert running(bystander.pid)
    finally:
        bystander.kill()
        bystander.wait()


DRIVER = """
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

DETACH_THEN_SLEEP = DETACH + "time.sleep(600)\n"


@pytest.mark.parametrize("stop", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "Ctrl-C"])
def test_stopping_the_kit_ends_the_whole_tree(tmp_path: Path, stop: int) -> None:
    pid_file = tmp_path / "pids"
    script = _script(tmp_path, DETACH_THEN_SLEEP.replace("sys.argv[1]", repr(str(pid_file))))
    kit = subprocess.Popen([sys.executable, "-c", DRIVER, str(script)], cwd=ROOT, stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL)
    [daemon] = pids_written(pid_file)
    started = time.monotonic()
    kit.send_signal(stop)
    code = kit.wait(30)
    # SIGTERM: cli's SystemExit(128 + 15); Ctrl-C: Python ends by its own SIGINT after the KeyboardInterrupt.
    assert code == (128 + signal.SIGTERM if stop == signal.SIGTERM else -signal.SIGINT)
    assert time.monotonic() - started < 20
    assert ended_soon(daemon)


def test_the_processes_of_a_multi_process_run_take_their_daemons_with_them(tmp_path: Path) -> None:
    pid_file = tmp_path / "pids"
    body = DETACH.replace("sys.argv[1]", repr(str(pid_file)) + " + os.environ['RANK']")
    group = multiprocess.ProcessGroup([[sys.executable, "-c", body]] * 2,
                                      [{**os.environ, "RANK": str(rank)} for rank in range(2)])
    codes, _tail = group.wait(timeout=60)
    assert codes == [0, 0]
    daemons = [pids_written(Path(f"{pid_file}{rank}"))[0] for rank in range(2)]
    assert all(ended_soon(pid) for pid in daemons)
    assert len(group.leftovers) == 2


def test_output_reading_stops_even_when_a_writer_escaped_the_tree(tmp_path: Path) -> None:
    # A writer the kit cannot find (it left the session and cleared its environment) keeps the pipe open:
    # the check still ends after the drain, not when that writer does.
    pid_file = tmp_path / "pids"
    body = ("import os, subprocess\n"
            "escaped = subprocess.Popen(['setsid', 'sleep', '60'], env={'PATH': os.environ['PATH']})\n"
            f"open({str(pid_file)!r}, 'w').write(str(escaped.pid))\n")
    started = time.monotonic()
    ended = child_processes.run([sys.executable, "-c", body], os.environ, 60, echo=None)
    seconds = time.monotonic() - started
    [escaped] = pids_written(pid_file)
    os.kill(escaped, signal.SIGKILL)
    try:
        os.waitpid(escaped, 0)  # it re-parented to this process, the subreaper at the time
    except ChildProcessError:
        pass
    assert ended.code == 0
    assert seconds < child_processes.DRAIN_S + 10
