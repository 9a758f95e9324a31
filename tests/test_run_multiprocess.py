"""kit.run.multiprocess: N processes started, watched, killed together, and their results merged."""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from kit.run import multiprocess
from kit.run.multiprocess import ProcessGroup, merge, result_path
from tests.process_state import ended_soon, pids_written


def _python(code: str) -> list[str]:
    return [sys.executable, "-c", code]


def _result(verdict: str = "affected", rank: int = 0, **summary: Any) -> dict[str, Any]:
    figures = {"all_gathers": 1, "collectives": 1, "lu_batch_per_device": 1024, "lu_fed_by": "all-gather",
               "devices": 4, "positive_control_ok": True}
    figures.update(summary)
    # "check": as repro/scaling.py writes it; which summary figures must agree is that check's (kit/checks).
    return {"check": "scaling", "verdict": verdict, "reason": "why", "environment": {"jax": "0.4.35", "device_count": 2},
            "parameters": {"processes": 2}, "evidence": {"summary": figures},
            "process": {"process_index": rank, "global_devices": 4, "local_devices": 2}}


def _write(out: Path, rank: int, data: dict[str, Any]) -> None:
    result_path(out, rank).write_text(json.dumps(data), encoding="utf-8")


def test_result_files_are_named_per_rank_like_the_repro_names_them(tmp_path: Path) -> None:
    from repro.scaling import process_result_path

    out = tmp_path / "result.json"
    assert str(result_path(out, 1)) == process_result_path(str(out), 1)


def test_agreeing_processes_merge_into_one_record_with_every_process(tmp_path: Path) -> None:
    out = tmp_path / "result.json"
    _write(out, 0, _result(rank=0))
    _write(out, 1, _result(rank=1))
    fields = merge(out, 2, [0, 0], [])
    assert fields.status == "ran"
    assert fields.verdict == "affected"
    assert fields.environment["process_count"] == 2
    assert fields.environment["device_count"] == 4  # the global count, not one process's
    assert [p["process_index"] for p in fields.evidence["processes"]] == [0, 1]
    assert fields.evidence["processes_agree"] is True


def test_processes_that_read_different_hlo_make_the_verdict_inconclusive(tmp_path: Path) -> None:
    out = tmp_path / "result.json"
    _write(out, 0, _result(rank=0))
    _write(out, 1, _result(rank=1, lu_batch_per_device=2048))
    fields = merge(out, 2, [0, 0], [])
    assert fields.verdict == "inconclusive"
    assert "process 1: lu_batch_per_device 2048 vs 1024" in fields.reason
    assert fields.evidence["processes_agree"] is False


def test_a_release_that_cannot_join_processes_is_unsupported_with_its_reason(tmp_path: Path) -> None:
    out = tmp_path / "result.json"
    _write(out, 0, {"unsupported": "the cpu client ignores jax.distributed", "verdict": None})
    fields = merge(out, 2, [4, 4], [])
    assert fields.status == "unsupported"
    assert "ignores jax.distributed" in fields.reason


def test_a_process_without_a_result_makes_the_run_crashed(tmp_path: Path) -> None:
    out = tmp_path / "result.json"
    _write(out, 0, _result(rank=0))
    fields = merge(out, 2, [0, -9], ["[p1] Fatal Python error: Aborted"])
    assert fields.status == "crashed"
    assert "[1]" in fields.reason
    assert "Aborted" in fields.reason


def test_one_process_dying_takes_the_hung_one_down_within_the_grace(tmp_path: Path) -> None:
    pid_file = tmp_path / "hung.pid"
    hung = _python(f"import os, time; open({str(pid_file)!r}, 'a').write(str(os.getpid()) + ' '); time.sleep(600)")
    # It dies once the hung one is up (not after a fixed delay: on a loaded
    # machine the other interpreter may not have started by then).
    dies = _python("import os, sys, time\n"
                   f"while not os.path.exists({str(pid_file)!r}): time.sleep(0.05)\n"
                   "sys.exit(7)\n")
    started = time.monotonic()
    group = ProcessGroup([hung, dies], [dict(os.environ)] * 2)
    codes, _tail = group.wait(timeout=120, grace=1.0)
    assert time.monotonic() - started < 30
    assert codes[1] == 7
    assert codes[0] is not None
    assert codes[0] < 0  # killed by a signal
    assert ended_soon(pids_written(pid_file, 1, within=60)[0])
    assert not group.timed_out


def test_a_timeout_kills_every_process_and_their_children(tmp_path: Path) -> None:
    pid_file = tmp_path / "child.pid"
    # The process starts a grandchild of its own: the group kill must reach it too.
    spawner = _python(
        "import subprocess, sys, time\n"
        f"child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(600)'])\n"
        f"open({str(pid_file)!r}, 'a').write(str(child.pid) + ' ')\n"
        "time.sleep(600)\n")
    group = ProcessGroup([spawner, spawner], [dict(os.environ)] * 2)
    children = pids_written(pid_file, 2, within=60)
    _codes, _tail = group.wait(timeout=2)
    assert group.timed_out
    assert all(ended_soon(pid) for pid in children)


def test_output_is_prefixed_with_the_rank(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    group = ProcessGroup([_python("print('hello')"), _python("print('world')")], [dict(os.environ)] * 2)
    codes, tail = group.wait(timeout=60)
    assert codes == [0, 0]
    assert sorted(tail) == ["[p0] hello", "[p1] world"]


def test_under_srun_one_srun_starts_the_processes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    started: list[list[str]] = []

    class FakeGroup:
        timed_out = False

        def __init__(self, commands: list[list[str]], envs: list[dict[str, str]], prefixes: list[str]) -> None:
            started.extend(list(command) for command in commands)

        def wait(self, timeout: float) -> tuple[list[int], list[str]]:
            return [0], []

    monkeypatch.setenv(multiprocess.SRUN_ENV, "1")
    monkeypatch.setattr(multiprocess, "ProcessGroup", FakeGroup)
    # A SLURM client or not, this machine is only asked what srun's command is: a fresh CI machine has no srun
    # until .ci/run installs SLURM for the integration lane, after this test has run.
    monkeypatch.setattr("kit.launch.srun.shutil.which", lambda name: f"/usr/bin/{name}")
    out = tmp_path / "result.json"
    _write(out, 0, _result(rank=0))
    _write(out, 1, _result(rank=1))
    fields = multiprocess.run_processes(["python", "-m", "repro.scaling"], out, 2, 60, {}, lambda m: None)
    # srun labels each task's lines with its rank (``1: ...``), as the local ranks are prefixed ``[p1]``.
    assert started == [["srun", "--ntasks=2", "--kill-on-bad-exit=1", "--cpu-bind=none", "--label",
                        "python", "-m", "repro.scaling"]]
    assert fields.status == "ran"


def test_a_crash_is_explained_by_the_dying_process_not_its_partners_heartbeat_noise() -> None:
    # As jax 0.4.25 printed it with 2 devices in each of 2 processes.
    tail = [
        "[p0] terminate called after throwing an instance of 'absl::lts_20230802::BadStatusOrAccess'",
        "[p0]   what():  Bad StatusOr access: UNKNOWN: Gloo context initialization failed: DEADLINE_EXCEEDED: "
        "GetKeyValue() timed out with key: cpu:gloo/0,1,2,3/1",
        "[p1] F1130 client.h:78] Terminating process because the coordinator detected missing heartbeats.",
        '[p1] :{"created":"@1796010613.457451459","description":"Failed to pick subchannel"}',
    ]
    line = multiprocess.telling_line(tail)
    assert line.startswith("[p0] Bad StatusOr access: UNKNOWN: Gloo context initialization failed")
    assert "one device per process" in line
    assert multiprocess.telling_line(["[p1] Traceback (most recent call last):", "[p1] ValueError: bad mesh"]) == \
        "[p1] ValueError: bad mesh"


def test_ctrl_c_while_waiting_kills_every_process(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pid_file = tmp_path / "p.pid"
    sleeper = _python(f"import os, time; open({str(pid_file)!r}, 'a').write(str(os.getpid()) + ' '); time.sleep(600)")
    group = ProcessGroup([sleeper, sleeper], [dict(os.environ)] * 2)
    pids = pids_written(pid_file, 2, within=60)

    real_sleep = time.sleep
    calls: list[float] = []

    def interrupted_once(seconds: float) -> None:  # as one Ctrl-C arrives during the wait
        calls.append(seconds)
        if len(calls) == 1:
            raise KeyboardInterrupt
        real_sleep(seconds)

    monkeypatch.setattr(multiprocess.time, "sleep", interrupted_once)
    with pytest.raises(KeyboardInterrupt):
        group.wait(timeout=600)
    assert all(ended_soon(pid) for pid in pids)


def test_the_launcher_named_on_the_command_line_starts_them(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    started: list[list[str]] = []
    envs: list[dict[str, str]] = []

    class FakeGroup:
        timed_out = False

        def __init__(self, commands: list[list[str]], given: list[dict[str, str]], prefixes: list[str]) -> None:
            started.extend(list(command) for command in commands)
            envs.extend(given)

        def wait(self, timeout: float) -> tuple[list[int], list[str]]:
            return [0] * len(started), []

    monkeypatch.delenv(multiprocess.SRUN_ENV, raising=False)
    monkeypatch.setattr(multiprocess, "ProcessGroup", FakeGroup)
    out = tmp_path / "result.json"
    _write(out, 0, _result(rank=0))
    _write(out, 1, _result(rank=1))
    multiprocess.run_processes(["python", "-m", "repro.scaling"], out, 2, 60, {}, lambda m: None,
                               launcher="ssh", hosts=("n1", "n2"))
    assert [command[command.index("--") + 1] for command in started] == ["n1", "n2"]  # the host, after "--"
    started.clear()
    multiprocess.run_processes(["python", "-m", "repro.scaling"], out, 2, 60, {}, lambda m: None)
    assert started == [["python", "-m", "repro.scaling"]] * 2  # local by default outside a SLURM task
    assert [env["JAX_PROCESS_ID"] for env in envs[-2:]] == ["0", "1"]


def test_check_runs_take_a_launcher_and_refuse_an_unknown_one() -> None:
    from kit.commands import run_parser
    from kit.errors import UsageError

    args = run_parser("scaling").parse_args(["--processes", "2", "--launcher", "srun"])
    assert args.launcher == "srun"
    with pytest.raises(UsageError, match="mpirun"):
        run_parser("scaling").parse_args(["--launcher", "mpirun"])
