"""kit.bisect.outcomes: the one mapping from what a release did to good / bad / skip."""

from __future__ import annotations

import pytest

from kit.bisect.observation import Observation
from kit.bisect.outcomes import classify, label, settle
from kit.bisect.search import ProbeOutcome
from kit.records import Record
from tests.observations import observed


@pytest.mark.parametrize(
    ("status", "verdict", "crash", "expected"),
    [
        ("ran", "unaffected", "skip", ProbeOutcome.GOOD),
        ("ran", "affected", "skip", ProbeOutcome.BAD),
        ("ran", "inconclusive", "bad", ProbeOutcome.SKIP),
        ("yanked", None, "bad", ProbeOutcome.SKIP),
        ("not-installable", None, "bad", ProbeOutcome.SKIP),
        ("timed-out", None, "bad", ProbeOutcome.BAD),
        ("crashed", None, "good", ProbeOutcome.GOOD),
        ("crashed", None, "skip", ProbeOutcome.SKIP),
    ],
)
def test_classify_table(status: str, verdict: str | None, crash: str, expected: ProbeOutcome) -> None:
    assert classify(observed(status, verdict, "why"), crash) is expected


def test_settle_reports_a_flip_between_conclusive_runs() -> None:
    runs = [observed("ran", "affected", "a"), observed("ran", "unaffected", "b")]
    settled = settle(runs)
    assert settled.found.flipped
    assert settled.found.verdict == "inconclusive"
    assert settled.found.runs == ["affected", "unaffected"]


def test_saved_observation_with_unknown_keys_reads_back() -> None:
    saved = {**observed("ran", "affected", "why", source="record").to_json(), "from_a_newer_kit": 1}
    assert Observation.from_json(saved) == observed("ran", "affected", "why", source="record")


@pytest.mark.parametrize(
    ("observation", "crash", "script", "text"),
    [
        (observed("timed-out", None, "", timeout_s=60), "bad", False, "timed out after 60 s, counted bad by --crash bad"),
        (observed("crashed", None, ""), "skip", True, "crashed, counted skip by --crash skip"),
        (observed("not-installable", None, ""), "bad", False, "skip (not installable)"),
        (observed("yanked", None, ""), "bad", False, "skip (yanked)"),
        (observed("ran", "inconclusive", ""), "bad", True, "skip (exit 125)"),
        (observed("ran", "inconclusive", ""), "bad", False, "skip (inconclusive)"),
        (observed("ran", "affected", ""), "skip", False, "bad (affected)"),
        (observed("ran", "unaffected", ""), "skip", True, "good"),
    ],
)
def test_label_says_why(observation: Observation, crash: str, script: bool, text: str) -> None:
    assert label(classify(observation, crash), observation, crash, script) == text


def test_the_probe_line_says_how_many_compiles_were_reused() -> None:
    from kit.bisect.outcomes import observation_of
    from kit.bisect.probe.judges import probe_line

    record = {"status": "ran", "verdict": "unaffected", "reason": "each device factorises its share",
              "evidence": {"compile_cache": {"used": True, "compiles": 33, "reused": 30, "written": 3}}}
    seen = settle([observation_of(Record(record))])  # as a probe settles its runs
    assert seen.cost.compiles == "compile cache: 30 of 33 compiles reused"
    assert probe_line("jax 0.5.3", seen, ProbeOutcome.GOOD, script=False).endswith(
        "each device factorises its share · compile cache: 30 of 33 compiles reused")
    unsupported = {**record, "evidence": {"compile_cache": {"used": False, "why": "not supported here: no cache"}}}
    assert observation_of(Record(unsupported)).cost.compiles == "compile cache: not supported here: no cache"
    assert observation_of(Record({**record, "evidence": {}})).cost.compiles == ""  # a script, or a record from before
    assert Observation.from_json(seen.to_json()) == seen
