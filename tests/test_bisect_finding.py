"""kit.bisect.report.finding: what a bisect cost, said from what each observation records."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from kit.bisect.bounds import Bounds
from kit.bisect.candidates import Candidate
from kit.bisect.report.finding import REPORT_SCHEMA, BisectFinding, cost_lines, rounds_line, to_json
from kit.bisect.options import BisectOptions
from kit.bisect.observation import Observation
from kit.bisect.search import ProbeOutcome
from kit.slurm.jobs import SlurmOptions
from tests.observations import observed

BOUNDS = Bounds.of_releases("0.6.0", "0.4.20", how="given")
OPTIONS = BisectOptions(check=None, script=Path("repro.py"), good="0.6.0", bad="0.4.20", argv=("--script", "repro.py"))


def finding(observations: dict[str, Observation], now: list[str]) -> BisectFinding:
    outcomes = {v: ProbeOutcome.BAD if o.found.verdict == "affected" else ProbeOutcome.GOOD for v, o in observations.items()}
    candidates = [Candidate(v, (), None, "3.12", v) for v in observations]
    return BisectFinding("script-repro", OPTIONS.specs, BOUNDS, candidates, outcomes, observations, now,
                   seconds=2.5)


def test_a_rerun_says_it_ran_nothing_and_what_the_earlier_runs_did() -> None:
    earlier = {
        "0.4.20": observed("ran", "affected", "exit 1", "cache", environment="built", seconds=40.0,
                              ran_at="2026-11-30T03:46:27Z", by="script-repro-good0.6.0-bad0.4.20-cpu"),
        "0.6.0": observed("ran", "unaffected", "exit 0", "cache", environment="reused", seconds=8.0,
                             ran_at="2026-11-30T03:47:00Z", by="script-repro-good0.6.0-bad0.4.20-cpu"),
    }
    lines = cost_lines(finding(earlier, []))
    assert lines[0] == "This run ran nothing and built nothing: every probe was known before it started (2.5 s)."
    assert lines[1] == ("Earlier runs answered 2 (0.4.20, 0.6.0) from the probe cache; they had built 1 environment "
                        "and spent 48 s probing them (script-repro-good0.6.0-bad0.4.20-cpu, "
                        "2026-11-30T03:46:27Z … 2026-11-30T03:47:00Z).")


def test_a_fresh_run_counts_only_its_own_builds() -> None:
    seen = {
        "0.4.20": observed("ran", "affected", "exit 1", "run", environment="built", seconds=40.0),
        "0.6.0": observed("ran", "unaffected", "exit 0", "record"),
    }
    lines = cost_lines(finding(seen, ["0.4.20"]))
    assert lines == ["This run probed 1 release (0.4.20): 1 environment built, 0 reused; 2.5 s in all.",
                     "Current matrix records answered 1 (0.6.0) without a run."]


def test_the_rounds_line_says_how_many_ran_together_and_where() -> None:
    seen = {"0.4.20": observed("ran", "affected", "exit 1"), "0.6.0": observed("ran", "unaffected", "exit 0")}
    rounds = [["0.4.20", "0.6.0"], ["0.5.0"]]
    on_slurm = dataclasses.replace(finding(seen, ["0.4.20", "0.6.0"]), rounds=rounds,
                                   specs=dataclasses.replace(OPTIONS, jobs=3, slurm=SlurmOptions()).specs)
    assert rounds_line(on_slurm) == ("The search waited for 2 rounds of probes (up to 3 per round, SLURM jobs): "
                                     "0.4.20, 0.6.0; 0.5.0.")
    here = dataclasses.replace(on_slurm, specs=dataclasses.replace(OPTIONS, jobs=3).specs)
    assert rounds_line(here) == ("The search waited for 2 rounds of probes (up to 3 per round, side by side on this "
                                 "machine): 0.4.20, 0.6.0; 0.5.0.")


def test_the_json_report_names_its_schema_and_the_bounds_as_tested() -> None:
    seen = {"0.4.20": observed("ran", "unaffected", "exit 0"), "0.6.0": observed("ran", "unaffected", "exit 0")}
    data = to_json(finding(seen, ["0.4.20", "0.6.0"]), ["notes"])
    assert data["schema"] == REPORT_SCHEMA
    assert data["bounds_tested"]["--bad"] == {"version": "0.4.20", "wanted": "bad", "tested": "good"}


def test_ends_taken_from_triage_s_runs_are_counted_apart_and_say_what_ran() -> None:
    from kit.bisect.report.markdown import _reuse_lines

    seen = {
        "0.4.20": observed("ran", "affected", "judged", "triage", seconds=19.8, by="triage",
                              taken_from="triage ran reports/triage/captures/x.py (sha256 aaaaaaaaaaaa) on jax 0.4.20"),
        "0.6.0": observed("ran", "unaffected", "exit 0", "run", environment="reused", seconds=5.0),
    }
    shown = finding(seen, ["0.6.0"])
    assert cost_lines(shown)[1] == ("Triage's runs answered 1 (0.4.20): its capture of the block, run there in the "
                                    "same install and judged by the check's judge (20 s, spent before this bisect).")
    data = to_json(shown, [])
    assert data["answered_by_triage"] == ["0.4.20"]
    assert data["probed_now"] == ["0.6.0"]
    lines = _reuse_lines(shown)
    assert lines[1].startswith("Taken from triage's runs, not probed by this bisect")
    assert lines[3] == "- jax 0.4.20: triage ran reports/triage/captures/x.py (sha256 aaaaaaaaaaaa) on jax 0.4.20"
