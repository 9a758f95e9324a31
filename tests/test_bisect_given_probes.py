"""kit/bisect/probe/given.py and the judge's use of it: a run handed to the bisect (triage's) answers a release's
probe only for the check it was judged for and in the same install, says what ran, and is never kept as a probe.

The judge's use of them is in tests/test_bisect_judges.py.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from kit.records import Record
from kit.bisect.probe.given import given_by_release, given_probe, why_not_taken
from kit.bisect.probe.judges import probe_line
from kit.bisect.observation import Observation
from kit.bisect.search import ProbeOutcome
from tests.given_runs import CAPTURE, CHECK, capture_record, handed, identity



def test_a_handed_run_says_what_ran_and_carries_the_check_s_verdict(tmp_path: Path) -> None:
    given = given_by_release([handed("0.6.0", tmp_path)], tmp_path)["0.6.0"]
    seen = given.observation
    assert (seen.found.status, seen.found.verdict, seen.came_from.source, seen.came_from.by) == ("ran", "affected", "triage", "triage")
    assert seen.came_from.taken_from.startswith("triage ran reports/triage/captures/")
    assert seen.came_from.log.startswith("reports/")
    assert seen.came_from.output_tail[-1] == "TypeError: boom"
    assert seen.found.exception == "TypeError: boom"
    assert (seen.installed.jaxlib, seen.installed.packages["numpy"], seen.cost.seconds, seen.came_from.ran_at) == ("0.6.0", "2.1.3", 19.8,
                                                                               "2026-12-02T07:31:30Z")
    assert given.identity.subject == CAPTURE  # what ran is kept as what ran


def test_it_answers_only_the_check_it_was_judged_for_in_the_same_install(tmp_path: Path) -> None:
    given = given_probe(Record(capture_record("0.6.0")), CHECK, "affected", "judged", "ran", "", tmp_path)
    assert why_not_taken(given, identity("0.6.0", CHECK)) == ""
    assert why_not_taken(given, identity("0.6.0", {**CHECK, "script_sha256": "d" * 64})) == (
        "triage judged its run for another check than this bisect runs")
    assert why_not_taken(given, identity("0.6.0", {**CHECK, "host_devices": 4})) != ""
    assert why_not_taken(given, identity("0.6.0", CHECK, numpy="2.2.0")) == "numpy 2.1.3 there, 2.2.0 here"


def test_the_probe_line_names_triage_and_keeps_what_ran_for_the_report(tmp_path: Path) -> None:
    seen = given_by_release([handed("0.6.0", tmp_path)], tmp_path)["0.6.0"].observation
    first, second = probe_line("jax 0.6.0", seen, ProbeOutcome.BAD, script=True).split("\n")
    assert first.startswith("probe jax 0.6.0: bad [triage] the check's judge on triage's run: BEHAVES AS REPORTED")
    assert second.startswith("  taken from: triage ran reports/triage/captures/issue-1a2b3c.py")


def test_an_observation_read_back_keeps_where_it_was_taken_from(tmp_path: Path) -> None:
    seen = given_by_release([handed("0.6.0", tmp_path)], tmp_path)["0.6.0"].observation
    assert Observation.from_json(seen.to_json()) == seen
    with pytest.raises(ValueError, match="taken_from"):
        saved = seen.to_json()
        Observation.from_json({**saved, "came_from": {**saved["came_from"], "taken_from": 3}})
