"""kit.bisect.outcomes: the one mapping from what a release did to good / bad / skip."""

from __future__ import annotations

import pytest

from kit.bisect.outcomes import Observation, classify, script_observation, settle
from kit.bisect.search import Outcome


@pytest.mark.parametrize(
    ("status", "verdict", "crash", "expected"),
    [
        ("ran", "unaffected", "skip", Outcome.GOOD),
        ("ran", "affected", "skip", Outcome.BAD),
        ("ran", "inconclusive", "bad", Outcome.SKIP),
        ("ran", "untestable", "bad", Outcome.SKIP),
        ("not-installable", None, "bad", Outcome.SKIP),
        ("timed-out", None, "bad", Outcome.BAD),
        ("crashed", None, "good", Outcome.GOOD),
        ("crashed", None, "skip", Outcome.SKIP),
    ],
)
def test_classify_table(status: str, verdict: str | None, crash: str, expected: Outcome) -> None:
    assert classify(Observation(status, verdict, "why"), crash) is expected


@pytest.mark.parametrize(
    ("code", "status", "verdict"),
    [(0, "ran", "unaffected"), (1, "ran", "affected"), (127, "ran", "affected"), (125, "ran", "untestable"),
     (-9, "crashed", None), (137, "crashed", None), (None, "timed-out", None)],
)
def test_script_exit_codes(code: int | None, status: str, verdict: str | None) -> None:
    observation = script_observation(code, 5)
    assert (observation.status, observation.verdict) == (status, verdict)


def test_settle_reports_a_flip_between_conclusive_runs() -> None:
    runs = [Observation("ran", "affected", "a"), Observation("ran", "unaffected", "b")]
    settled = settle(runs)
    assert settled.flipped and settled.verdict == "inconclusive" and settled.runs == ["affected", "unaffected"]


def test_saved_observation_with_unknown_keys_reads_back() -> None:
    saved = {**Observation("ran", "affected", "why", source="record").to_json(), "from_a_newer_kit": 1}
    assert Observation.from_json(saved) == Observation("ran", "affected", "why", source="record")
