"""kit.slurm.follow: the one loop the matrix and bisect follow their job arrays with."""

from __future__ import annotations

from typing import Any

import pytest

from kit.slurm import follow as following
from kit.slurm.jobs import SQUEUE_FAILURES


def scripted(monkeypatch: pytest.MonkeyPatch, polls: list[Any]) -> None:
    """squeue answers each poll from ``polls`` in turn (None: squeue failed), then lists nothing."""
    answers = iter(polls)
    monkeypatch.setattr(following, "queued_states", lambda job_id: next(answers, {}))


def test_each_state_change_is_said_once_and_each_task_lands_once(monkeypatch: pytest.MonkeyPatch) -> None:
    scripted(monkeypatch, [{0: ("PENDING", ""), 1: ("PENDING", "")},
                           {0: ("RUNNING", "node1"), 1: ("PENDING", "")},
                           {0: ("RUNNING", "node1"), 1: ("RUNNING", "node2")},
                           None,  # one failed poll changes nothing
                           {1: ("RUNNING", "node2")}])
    lines: list[str] = []
    landed: list[int] = []
    done = following.follow("12", 2, lambda task: f"task {task}", lines.append,
                            landed=lambda task, seconds: landed.append(task), poll_s=0)
    assert done
    assert landed == [0, 1]
    assert lines == ["task 0: pending", "task 1: pending", "task 0: running on node1", "task 1: running on node2"]


def test_squeue_failing_again_and_again_ends_the_waiting_not_the_job(monkeypatch: pytest.MonkeyPatch) -> None:
    scripted(monkeypatch, [{0: ("RUNNING", "n")}] + [None] * SQUEUE_FAILURES)
    lines: list[str] = []
    landed: list[int] = []
    done = following.follow("12", 1, lambda task: f"task {task}", lines.append,
                            landed=lambda task, seconds: landed.append(task), stopped_tip="the report merges it",
                            poll_s=0)
    assert not done
    assert landed == []  # it may still be running
    assert lines[-1] == (f"squeue has failed {SQUEUE_FAILURES} times in a row; stopped waiting for job 12: "
                         "the report merges it")
