"""kit/bisect/rounds.py: the search's probes answered one or a batch at a time, each round remembered.

The driver's rounds over fake releases are in test_bisect_driver.py; here the probe is a function of the test's,
so what runs when, and in how many threads, can be seen.
"""

from __future__ import annotations

import threading
import time
from typing import Mapping, Sequence

import pytest

from kit.bisect.rounds import Rounds, side_by_side
from kit.bisect.search import ProbeOutcome


def _judge(version: str) -> ProbeOutcome:
    return ProbeOutcome.BAD if version >= "0.5" else ProbeOutcome.GOOD


def test_each_round_is_remembered_in_the_order_it_was_asked() -> None:
    asked: list[str] = []

    def probe(version: str) -> ProbeOutcome:
        asked.append(version)
        return _judge(version)

    rounds = Rounds(probe)
    assert rounds.one("0.4") is ProbeOutcome.GOOD
    assert dict(rounds.many(["0.5", "0.45"])) == {"0.5": ProbeOutcome.BAD, "0.45": ProbeOutcome.GOOD}
    assert rounds.rounds == [["0.4"], ["0.5", "0.45"]]
    assert asked == ["0.4", "0.5", "0.45"]


def test_a_round_keeps_its_own_copy_of_the_batch() -> None:
    # The search may reuse its list for the next round; the record of this one must not change with it.
    rounds = Rounds(_judge)
    batch = ["0.4", "0.5"]
    rounds.many(batch)
    batch.append("0.6")
    assert rounds.rounds == [["0.4", "0.5"]]


def test_a_parallel_prober_answers_a_whole_round_even_a_round_of_one() -> None:
    # Under --slurm a round of one is still a job: it must go to the batch prober, not the single one.
    batches: list[list[str]] = []

    def many(batch: Sequence[str]) -> Mapping[str, ProbeOutcome]:
        batches.append(list(batch))
        return {version: ProbeOutcome.SKIP for version in batch}

    rounds = Rounds(_judge, many)
    assert rounds.many(["0.7"]) == {"0.7": ProbeOutcome.SKIP}
    assert rounds.one("0.4") is ProbeOutcome.GOOD  # the bounds' single probes stay one at a time
    assert batches == [["0.7"]]


def test_side_by_side_runs_up_to_jobs_probes_at_once_and_keeps_each_answer_with_its_candidate() -> None:
    running, peak, lock = [0], [0], threading.Lock()

    def probe(version: str) -> ProbeOutcome:
        with lock:
            running[0] += 1
            peak[0] = max(peak[0], running[0])
        time.sleep(0.2 if version.endswith("1") else 0.05)  # answers come back out of order
        with lock:
            running[0] -= 1
        return _judge(version)

    said: list[str] = []
    many = side_by_side(probe, 3, said.append)
    answers = many(["0.41", "0.42", "0.51", "0.52", "0.61"])
    assert answers == {"0.41": ProbeOutcome.GOOD, "0.42": ProbeOutcome.GOOD, "0.51": ProbeOutcome.BAD, "0.52": ProbeOutcome.BAD,
                       "0.61": ProbeOutcome.BAD}
    assert list(answers) == ["0.41", "0.42", "0.51", "0.52", "0.61"]
    assert peak[0] == 3
    assert len(said) == 1
    assert said[0].startswith("--jobs 3 on this machine: 3 probes side by side")


def test_a_probe_that_raises_stops_the_round_with_its_error() -> None:
    # A KitError in one thread (a full disk) must reach the command line, not vanish into the pool.
    def probe(version: str) -> ProbeOutcome:
        if version == "0.5":
            raise RuntimeError("disk full")
        return ProbeOutcome.GOOD

    many = side_by_side(probe, 2, lambda _line: None)
    with pytest.raises(RuntimeError, match="^disk full$"):
        many(["0.4", "0.5"])
