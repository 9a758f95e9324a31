"""explain --processes N: the program run as N ranks by a launcher, every rank's dump read as one program.

No JAX: each rank here stands in for XLA as tests/test_explain.py's program does (HLO captured from real
releases copied into the folder its ``--xla_dump_to`` names), and says what it was given. A rank's part is
chosen by ``JAX_PROCESS_ID``, the variable the local launcher sets.
"""

from __future__ import annotations

import dataclasses
import json
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest

from kit import explain
from kit.config import load_matrix
from kit.errors import UsageError
from kit.explain import capture as capture_module
from kit.explain import options as explain_options
from kit.install.environment import Environment, Prepared
from kit.run import multiprocess
from tests.process_state import ended_soon, pids_written

ROOT = Path(__file__).resolve().parent.parent
DATA = Path(__file__).parent / "data" / "hlo"

_RANK = '''
import os, re, shutil, sys, time
rank = int(os.environ["JAX_PROCESS_ID"])
flags = os.environ["XLA_FLAGS"]
folder = re.search(r"--xla_dump_to=(\\S+)", flags).group(1)
devices = re.search(r"--xla_force_host_platform_device_count=(\\d+)", flags).group(1)
print("rank", rank, "of", os.environ["JAX_NUM_PROCESSES"], "at", os.environ["JAX_COORDINATOR_ADDRESS"],
      "devices", devices, "dump", os.path.basename(folder), flush=True)
open({pids!r}, "a").write(str(os.getpid()) + " ")
release = {releases!r}[rank]
os.makedirs(folder, exist_ok=True)
for stage, name in (("before_optimizations", "before_optimizations"), ("after_optimizations", "cpu_after_optimizations")):
    shutil.copy(f"{data}/jax-{{release}}-train_slogdet.{{stage}}.txt", f"{{folder}}/module_0037.jit_loss.{{name}}.txt")
{ending}
'''


@pytest.fixture
def matrix(tmp_path: Path):  # type: ignore[no-untyped-def]
    return dataclasses.replace(load_matrix(ROOT / "matrix.toml"), results_dir=tmp_path / "reports" / "results")


def _explain(monkeypatch: pytest.MonkeyPatch, matrix: Any, folder: Path, argv: list[str],
             capsys: pytest.CaptureFixture[str], releases: tuple[str, ...] = ("0.6.0",) * 4,
             ending: str = "") -> tuple[int, list[str], dict[str, Any]]:
    """``explain train_slogdet.py ARGV`` where the environment is this Python and rank r copies ``releases[r]``'s
    HLO, then runs ``ending``; the exit, the console's lines and the record."""
    program = folder / "train_slogdet.py"
    program.write_text(textwrap.dedent(_RANK.format(data=str(DATA), releases=releases, ending=ending,
                                                    pids=str(folder / "pids"))))
    monkeypatch.setattr(capture_module.runner, "prepare", lambda matrix, request, log: Prepared(
        plan=None, resolution=None, jax="0.6.0",
        environment=Environment(python=Path(sys.executable), versions={"jax": "0.6.0"}, obtained="reused")))
    code = explain.main(matrix, ["--called-from", str(folder), "train_slogdet.py", "--releases", "0.6.0", *argv],
                        log=lambda line: None, reproduce="nox -s explain")
    record = json.loads((folder / "reports" / "explain-train_slogdet-0.6.0.json").read_text())
    return code, capsys.readouterr().out.splitlines(), record


def test_two_ranks_of_two_devices_each_that_compile_the_same_are_read_as_one_program(
        monkeypatch: pytest.MonkeyPatch, matrix: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, lines, record = _explain(monkeypatch, matrix, tmp_path, ["--processes", "2"], capsys)
    assert code == 0, lines
    assert lines[0].endswith("(cpu, 4 host devices as 2 processes (local))")
    assert lines[1] == "0.6.0: every linalg op split (lu, triangular_solve); no unexpected collective"
    processes = record["processes"]
    assert (processes["count"], processes["launcher"], processes["devices_per_process"]) == (2, "local", 2)
    assert processes["agree"] is True
    assert [(r["rank"], r["exit_code"], r["modules"]) for r in processes["ranks"]] == [(0, 0, 1), (1, 0, 1)]
    assert "all 2 ranks compiled the same modules, read as one program" in record["reason"]
    assert record["identity"]["subject"]["processes"] == 2  # another process count is another run
    # Each rank had its place, 2 forced devices and a dump folder of its own; its lines carry its prefix.
    tail = record["run"]["output_tail"]
    for rank in (0, 1):
        said = next(line for line in tail if line.startswith(f"[p{rank}] rank {rank} of 2 at 127.0.0.1:"))
        assert said.endswith(f"devices 2 dump rank-{rank}")


def test_ranks_that_compile_different_programs_are_said_to_differ_with_the_first_difference(
        monkeypatch: pytest.MonkeyPatch, matrix: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, lines, record = _explain(monkeypatch, matrix, tmp_path, ["--processes", "2"], capsys,
                                   releases=("0.6.0", "0.4.35"))
    print("\n".join(lines))
    assert code == 1  # no answer: rank 0's modules are not the program's (was 0, "every linalg op split")
    assert "every" not in lines[-1] and "cannot tell: the ranks compiled different programs" in lines[1]
    assert record["processes"]["agree"] is False
    difference = record["processes"]["difference"]
    # 0.4.35 gathers the batch before its LU; 0.6.0 splits it: rank 1's first op is the gather.
    assert difference.startswith("rank 1 compiled all-gather (forward) at train_slogdet.py:39")
    assert difference.endswith("where rank 0 compiled lu (forward) at train_slogdet.py:39 in jit_loss_det: "
                               "split, 256 of 1024")
    assert f"the ranks compiled different programs ({difference})" in lines[1]


@pytest.mark.real_time  # waits out the grace a failed rank gives its partners
def test_a_rank_that_fails_takes_the_hung_one_down_and_is_the_one_said(
        monkeypatch: pytest.MonkeyPatch, matrix: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(multiprocess, "GRACE_S", 1.0)
    ending = ("if rank == 1:\n"
              f"    while len(open({str(tmp_path / 'pids')!r}).read().split()) < 2: time.sleep(0.05)\n"
              "    raise SystemExit('rank 1 lost its data')\n"
              "time.sleep(600)\n")
    started = time.monotonic()
    code, lines, record = _explain(monkeypatch, matrix, tmp_path, ["--processes", "2", "--timeout", "300"], capsys,
                                   ending=ending)
    assert time.monotonic() - started < 120  # not the timeout: the grace after rank 1 failed
    print("\n".join(lines))
    assert code == 1  # no answer from rank 0's modules when rank 1 failed (was 0, "every linalg op split")
    assert "the program exited 1 ([p1] rank 1 lost its data)" in lines[1]
    assert "cannot tell: rank 1 of 2: " in lines[1] and "every" not in lines[-1]
    assert record["run"]["reason"].startswith("rank 1 of 2: ")
    ranks = {r["rank"]: r for r in record["processes"]["ranks"]}
    assert ranks[1]["exit_code"] == 1 and ranks[0]["exit_code"] < 0  # rank 0 was killed, not failed
    assert all(ended_soon(pid) for pid in pids_written(tmp_path / "pids", 2))


@pytest.mark.real_time  # waits out a real time limit
def test_ranks_that_hang_are_all_killed_at_the_timeout(
        monkeypatch: pytest.MonkeyPatch, matrix: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, lines, record = _explain(monkeypatch, matrix, tmp_path, ["--processes", "4", "--timeout", "8"], capsys,
                                   ending="time.sleep(600)\n")
    assert code == 0
    assert "did not end within 8 s" in lines[1] and "every linalg op split" in lines[1]
    assert record["processes"]["devices_per_process"] == 1
    assert all(ended_soon(pid) for pid in pids_written(tmp_path / "pids", 4))


@pytest.mark.parametrize("argv, said", [
    (["--processes", "3"], "--devices 4 does not split over 3 processes"),
    (["--processes", "0"], "--processes must be 1 or more"),
    (["--processes", "2", "--launcher", "mpirun"], "there is no launcher 'mpirun'"),
    (["--processes", "2", "--launcher", "ssh"], "ssh needs the hosts"),
    (["--processes", "2", "--target", "tpu:v5e:2x2"], "cannot go with --processes"),
])
def test_processes_options_are_checked_before_anything_runs(matrix: Any, tmp_path: Path, argv: list[str],
                                                            said: str) -> None:
    (tmp_path / "train.py").write_text("")
    with pytest.raises(UsageError, match=said):
        explain_options.parse(matrix, ["train.py", *argv], cwd=tmp_path)


def test_hosts_alone_mean_ssh_and_one_process_stays_the_plain_run(matrix: Any, tmp_path: Path) -> None:
    (tmp_path / "train.py").write_text("")
    options = explain_options.parse(matrix, ["train.py", "--processes", "2", "--hosts", "a,b"], cwd=tmp_path)
    assert (options.launcher, options.hosts, options.launch_spec.devices_per_process) == ("ssh", ("a", "b"), 2)
    plain = explain_options.parse(matrix, ["train.py"], cwd=tmp_path)
    assert plain.processes == 1


def _ranked(code: int, tail: list[str]) -> Any:
    from kit.records import RunOutcome, Status
    from kit.run.shared_runs import DumpedRun

    return DumpedRun(RunOutcome(Status.RAN if code == 0 else Status.CRASHED, None, f"the script exited {code}",
                             {"exit_code": code}), modules=[{"name": "jit_loss", "partitions": 4}], output_tail=tail)


def test_the_failing_ranks_own_line_is_quoted_not_a_partners_that_came_first() -> None:
    from kit.run.explained_ranks import _one_program

    tail = ["[p0] RuntimeError: Gloo connection reset by peer while waiting for rank 1",
            "[p1] ValueError: rank 1 lost its shard"]
    ranks = [_ranked(-15, ["RuntimeError: Gloo connection reset by peer while waiting for rank 1"]),
             _ranked(1, ["ValueError: rank 1 lost its shard"])]
    run = _one_program(ranks, tail, False, 60, lambda rank: ([line for line in tail if line.startswith(f"[p{rank}]")],
                                                             ""))
    assert run.outcome.reason.startswith("rank 1 of 2: ")
    assert run.outcome.evidence["telling_line"] == "[p1] ValueError: rank 1 lost its shard"  # was rank 0's line


def test_an_ssh_that_never_connected_is_said_as_that_not_as_the_program_failing() -> None:
    from kit.run.explained_ranks import _one_program

    said = "ssh: connect to host node2 port 22: Connection timed out"
    tail = ["[p0] waiting for the coordinator's peers", f"[p1] {said}"]
    ranks = [_ranked(-15, []), _ranked(255, [said])]
    run = _one_program(ranks, tail, False, 60, lambda rank: ([line for line in tail if line.startswith(f"[p{rank}]")],
                                                             "node2" if rank else "node1"))
    assert run.outcome.reason == f"rank 1 of 2: ssh never connected to node2 ({said}), so the program did not start there"
