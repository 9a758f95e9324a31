"""An audit's tests shared out among pytest processes: each file whole in one, the loads near even, the outcomes and
the files' seconds of every process in one run, and the seconds kept for the next audit."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Sequence

from kit.known.harvest.changed_tests import TestFunction
from kit.known.harvest.pytest_run import PASSED, SideRun, TestOutcome
from kit.known.harvest.shared_out import run_shared_out, shared_out


def _tests(spec: dict[str, int]) -> list[TestFunction]:
    return [TestFunction(path, "C", f"test_{n}") for path, count in spec.items() for n in range(count)]


def test_each_file_goes_whole_to_one_process_the_slowest_first_to_the_least_loaded() -> None:
    tests = _tests({"a.py": 3, "b.py": 1, "c.py": 1, "d.py": 2})
    groups = shared_out(tests, {"a.py": 30.0, "b.py": 20.0, "c.py": 12.0, "d.py": 1.0}, 2)
    assert sorted(sorted({t.path for t in g}) for g in groups) == [["a.py", "d.py"], ["b.py", "c.py"]]
    assert sorted(t for g in groups for t in g) == sorted(tests)


def test_files_never_timed_are_guessed_by_their_tests_and_little_work_is_one_process() -> None:
    groups = shared_out(_tests({"big.py": 40, "s1.py": 10, "s2.py": 10, "s3.py": 10}), {}, 2)
    assert [sorted({t.path for t in g}) for g in groups] == [["big.py"], ["s1.py", "s2.py", "s3.py"]]
    assert len(shared_out(_tests({"only.py": 50}), {}, 4)) == 1  # a file is never split
    assert len(shared_out(_tests({"a.py": 2, "b.py": 2}), {"a.py": 3.0, "b.py": 3.0}, 4)) == 1  # not worth a start


def test_the_processes_run_side_by_side_into_one_run_and_their_files_seconds_are_kept(tmp_path: Path) -> None:
    both_started = threading.Barrier(2, timeout=10)  # fails unless the two groups run at the same time
    owns: list[Path] = []

    def run_one(group: Sequence[TestFunction], own: Path) -> SideRun:
        both_started.wait()
        owns.append(own)
        return SideRun({t.node_id: TestOutcome(PASSED, 1) for t in group}, seconds=len(group),
                       file_seconds={t.path: 2.5 for t in group})

    timings = tmp_path / "test-seconds.json"
    timings.write_text(json.dumps({"old.py": 9.0, "a.py": 20.0, "b.py": 20.0}))
    tests = _tests({"a.py": 2, "b.py": 1})
    run = run_shared_out(tests, tmp_path, run_one, 2, timings)
    assert set(run.outcomes) == {t.node_id for t in tests} and run.seconds == 2
    assert len(set(owns)) == 2 and all(own.parent == tmp_path for own in owns)  # each process its own folder
    assert json.loads(timings.read_text()) == {"old.py": 9.0, "a.py": 2.5, "b.py": 2.5}  # as measured this time


def test_a_half_written_timings_file_is_no_obstacle(tmp_path: Path) -> None:
    timings = tmp_path / "test-seconds.json"
    timings.write_text('{"a.py": 100, "b.py": 1')  # were it read, a.py and b.py would be worth two processes
    groups: list[list[str]] = []
    run = run_shared_out(_tests({"a.py": 1, "b.py": 1}), tmp_path,
                         lambda group, own: groups.append([t.path for t in group]) or SideRun(), 2, timings)
    assert groups == [["a.py", "b.py"]] and run.problem == ""  # the guesses: one process
