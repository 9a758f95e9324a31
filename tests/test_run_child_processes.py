"""kit/run/child_processes.py: one command in its own session, its output bounded, its end reported.

The hostile trees (forks holding stdout, daemons, Ctrl-C) are run in tests/faults/test_child_processes.py;
here `run`, `Child` and `repro_env` are checked for what every check relies on.
"""

from __future__ import annotations

import ctypes
import os
import signal
import sys
import time
from pathlib import Path

import pytest

from kit.run.child_output import Tail
from kit.run.child_processes import REPO_ROOT, Child, end_all, repro_env, run
from kit.run.process_tree import TREE_ENV

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="the kit's process handling is written for Linux")

PY = sys.executable


def _is_subreaper() -> bool:
    """PR_GET_CHILD_SUBREAPER: whether this process is a child subreaper now."""
    flag = ctypes.c_int(-1)
    assert ctypes.CDLL(None, use_errno=True).prctl(37, ctypes.byref(flag), 0, 0, 0) == 0
    return flag.value == 1


def _env(**extra: str) -> dict[str, str]:
    return {**os.environ, **extra}


def test_the_exit_code_and_the_output_come_back() -> None:
    echoed: list[str] = []
    ended = run([PY, "-c", "print('one'); print('two'); raise SystemExit(3)"], _env(), 30, echo=echoed.append)
    assert (ended.code, ended.timed_out, ended.leftovers) == (3, False, [])
    assert ended.tail == ["one", "two"]
    assert echoed == ["one", "two"]


def test_a_child_killed_by_a_signal_reports_it_negative() -> None:
    # Guards against reporting the raw wait status or 128+N as a shell would.
    ended = run([PY, "-c", "import os, signal; os.kill(os.getpid(), signal.SIGKILL)"], _env(), 30, echo=None)
    assert ended.code == -signal.SIGKILL
    assert not ended.timed_out


def test_stderr_is_kept_with_stdout_in_order() -> None:
    code = "import sys; print('out', flush=True); print('err', file=sys.stderr, flush=True); print('out2')"
    assert run([PY, "-c", code], _env(), 30, echo=None).tail == ["out", "err", "out2"]


@pytest.mark.real_time  # waits out a real time limit
def test_a_child_past_its_timeout_is_stopped_and_has_no_code() -> None:
    started = time.monotonic()
    ended = run([PY, "-c", "import time; print('started', flush=True); time.sleep(60)"], _env(), 1, echo=None)
    assert ended.timed_out
    assert ended.code is None
    assert time.monotonic() - started < 15
    assert ended.tail == ["started"]  # what it said before the timeout is kept


def test_stdin_is_empty_so_a_prompt_does_not_wait() -> None:
    # A check runs unattended: input() must meet end-of-file at once, not wait for a key until the timeout.
    ended = run([PY, "-c", "input('key? ')"], _env(), 30, echo=None)
    assert ended.code == 1
    assert any("EOFError" in line for line in ended.tail)


def test_the_working_folder_and_the_environment_reach_the_child(tmp_path: Path) -> None:
    code = "import os; print(os.getcwd()); print(os.environ['ASKED']); print(os.environ['" + TREE_ENV + "'])"
    ended = run([PY, "-c", code], _env(ASKED="yes"), 30, cwd=tmp_path, echo=None)
    cwd, asked, tree = ended.tail
    assert (Path(cwd).resolve(), asked) == (tmp_path.resolve(), "yes")
    assert len(tree.split(":")[-1].rsplit("-", 1)[-1]) == 16  # the tree's own token (after its kit's pid), added to what the env carried


def test_the_child_is_a_session_leader() -> None:
    # Its own session and group: how the kit ends the tree without touching its own group.
    code = "import os; print(os.getsid(0) == os.getpid(), os.getpgrp() == os.getpid())"
    assert run([PY, "-c", code], _env(), 30, echo=None).tail == ["True True"]


def test_a_shared_tail_gathers_several_runs_output() -> None:
    tail = Tail()
    run([PY, "-c", "print('first')"], _env(), 30, echo=None, tail=tail)
    ended = run([PY, "-c", "print('second')"], _env(), 30, echo=None, tail=tail)
    assert ended.tail == ["first", "second"]


def test_a_command_that_cannot_start_raises_and_leaves_the_kit_usable(tmp_path: Path) -> None:
    # The subreaper count is released on a failed start: the next run still works and still ends its tree.
    with pytest.raises(FileNotFoundError):
        run([str(tmp_path / "no-such-python")], _env(), 30, echo=None)
    assert not _is_subreaper()  # daemons the kit's other commands start must re-parent to init again
    assert run([PY, "-c", "print('ok')"], _env(), 30, echo=None).tail == ["ok"]


def test_status_reads_the_exit_without_reaping_the_child() -> None:
    # Until the tree is ended, the exited child's pid must stay taken (a zombie) so its group id cannot be reused.
    child = Child([PY, "-c", "raise SystemExit(7)"], _env(), None, Tail(), echo=None)
    deadline = time.monotonic() + 30
    while not child.exited() and time.monotonic() < deadline:
        time.sleep(0.02)
    assert child.status() == 7
    assert child.returncode is None  # not reaped yet
    os.kill(child.pid, 0)  # the pid still names it: no ProcessLookupError
    assert _is_subreaper()  # while a tree runs, its orphans re-parent to the kit
    assert child.end() == []
    assert child.returncode == 7
    assert not _is_subreaper()


def test_ending_twice_ends_once_and_keeps_the_first_answer() -> None:
    child = Child([PY, "-c", "import time; time.sleep(60)"], _env(), None, Tail(), echo=None)
    first = child.end()
    assert child.returncode == -signal.SIGKILL
    assert end_all([child]) == [first]


def test_end_all_ends_several_children_with_their_prefixes() -> None:
    tail = Tail()
    children = [Child([PY, "-c", f"print({i}, flush=True); import time; time.sleep(60)"], _env(), None, tail,
                      prefix=f"[{i}] ", echo=None) for i in range(2)]
    deadline = time.monotonic() + 30
    while len(tail.lines()) < 2 and time.monotonic() < deadline:
        time.sleep(0.02)
    assert end_all(children, grace_s=0.5) == [[], []]
    assert sorted(tail.lines()) == ["[0] 0", "[1] 1"]
    assert [child.returncode for child in children] == [-signal.SIGTERM, -signal.SIGTERM]  # the grace's SIGTERM


def test_repro_env_puts_the_environments_paths_then_the_repository_first(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYTHONPATH", "/mine")
    env = repro_env({"XLA_FLAGS": "--x"}, (Path("/env/extra"),))
    assert env["PYTHONPATH"].split(os.pathsep) == ["/env/extra", str(REPO_ROOT), "/mine"]
    assert env["PYTHONUNBUFFERED"] == "1"
    assert env["XLA_FLAGS"] == "--x"


def test_repro_env_takes_a_pythonpath_given_as_extra_env(monkeypatch: pytest.MonkeyPatch) -> None:
    # The extra variables are merged first, so their PYTHONPATH is kept (after the repository), not lost.
    monkeypatch.setenv("PYTHONPATH", "/mine")
    assert repro_env({"PYTHONPATH": "/given"})["PYTHONPATH"].split(os.pathsep)[-1] == "/given"


def test_repro_env_adds_no_empty_entry_that_would_put_the_working_folder_on_the_path(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PYTHONPATH", raising=False)
    assert "" not in repro_env()["PYTHONPATH"].split(os.pathsep)
    monkeypatch.setenv("PYTHONPATH", "/mine:")
    assert repro_env()["PYTHONPATH"].split(os.pathsep) == [str(REPO_ROOT), "/mine"]


def test_a_kit_site_folder_goes_before_the_path_the_run_would_have_had(monkeypatch: pytest.MonkeyPatch) -> None:
    from kit.run.child_processes import with_site

    monkeypatch.setenv("PYTHONPATH", "/opt/device-scrub")  # the TPU machine's JAX lies there, not in site-packages
    site = {"PYTHONPATH": "/kit/repro/explain_site", "KIT_X": "1"}
    # A user's interpreter as it is: the caller's path stays, after the site folder.
    assert with_site({}, site) == {"PYTHONPATH": "/kit/repro/explain_site:/opt/device-scrub", "KIT_X": "1"}
    # A kit-built environment runs without the caller's path (its isolating "" stays empty).
    assert with_site({"PYTHONPATH": ""}, site)["PYTHONPATH"] == "/kit/repro/explain_site"
    monkeypatch.delenv("PYTHONPATH")
    assert with_site(None, site)["PYTHONPATH"] == "/kit/repro/explain_site"
