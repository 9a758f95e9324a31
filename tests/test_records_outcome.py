"""`RunOutcome`, a run's outcome as one frozen value, its named steps, and `new_record`, the one record constructor."""

from __future__ import annotations

import dataclasses
import json

import pytest

from kit import __version__
from kit.records import SCHEMA, RunOutcome, Record, RecordHead, Status, Verdict, new_record, validate
from kit.run.kit_files import kit_files_changed


def test_a_step_gives_a_new_outcome_and_leaves_the_one_it_was_given() -> None:
    crashed = RunOutcome(Status.CRASHED, None, "exit 1", {"exit_code": 1})
    told = crashed.inconclusive("JAX cannot run here", jax_cannot_run={"ok": False})
    assert (told.status, told.verdict, told.reason) == (Status.RAN, Verdict.INCONCLUSIVE, "JAX cannot run here")
    assert told.evidence == {"exit_code": 1, "jax_cannot_run": {"ok": False}}
    assert crashed == RunOutcome(Status.CRASHED, None, "exit 1", {"exit_code": 1})  # untouched
    with pytest.raises(dataclasses.FrozenInstanceError):
        told.reason = "else"  # type: ignore[misc]


def test_a_later_step_s_evidence_wins_and_the_rest_is_kept() -> None:
    outcome = RunOutcome(Status.RAN, Verdict.AFFECTED, evidence={"summary": {}, "exit_code": 1})
    assert outcome.with_evidence(summary={"n": 2}).evidence == {"summary": {"n": 2}, "exit_code": 1}
    assert outcome.evidence_object("summary") == {} and outcome.evidence_object("exit_code") == {}


def test_the_kit_files_step_makes_a_verdict_inconclusive_but_not_a_crash_a_verdict() -> None:
    ran = kit_files_changed(RunOutcome(Status.RAN, Verdict.AFFECTED, "bad"), ["matrix.toml (changed)"])
    assert (ran.status, ran.verdict) == (Status.RAN, Verdict.INCONCLUSIVE)
    assert ran.reason.startswith("the check changed the kit's own files while it ran: matrix.toml (changed)")
    assert ran.reason.endswith("; it said: bad") and ran.evidence["kit_files_changed"] == ["matrix.toml (changed)"]
    crashed = kit_files_changed(RunOutcome(Status.CRASHED, None, "exit 3"), ["matrix.toml (deleted)"])
    assert (crashed.status, crashed.verdict) == (Status.CRASHED, None)


def test_an_outcome_reads_back_from_its_json_and_refuses_words_the_kit_does_not_know() -> None:
    outcome = RunOutcome(Status.RAN, Verdict.UNAFFECTED, "fine", {"n": 1}, environment={"jax": "0.6.0"}, metrics={})
    assert RunOutcome.from_json(json.loads(json.dumps(outcome.to_json()))) == outcome
    with pytest.raises(ValueError):
        RunOutcome.from_json({"status": "sideways"})
    with pytest.raises(ValueError):
        RunOutcome.from_json({"status": "ran", "verdict": "maybe"})


def _head(**changes: object) -> RecordHead:
    head = RecordHead({"check": "scaling"}, {"jax": "0.6.0", "backend": "cpu", "preset": None},
                      {"python": "3.11"}, {"schema": 2}, "nox -s scaling-0.6.0", created="2026-12-01T00:00:00Z",
                      host={"name": "box", "machine_id": "abc123abc123"})
    return dataclasses.replace(head, **changes)  # type: ignore[arg-type]


def test_a_record_is_its_head_its_outcome_and_its_sections_in_one_schema() -> None:
    outcome = RunOutcome(Status.RAN, Verdict.AFFECTED, "whole", {"summary": {"all_gathers": 1}},
                      environment={"backend": "cpu"})
    record = new_record(_head(), outcome, parameters={"batch": 8}, environment={"python": "3.11"}, slurm=None,
                        duration_s=1.5)
    assert record == {"schema": SCHEMA, "kit_version": __version__, "check": "scaling",
                      "requested": {"jax": "0.6.0", "backend": "cpu", "preset": None}, "parameters": {"batch": 8},
                      "environment": {"backend": "cpu"},  # what the run said wins over what the kit knew before
                      "duration_s": 1.5, "status": "ran", "verdict": "affected", "reason": "whole",
                      "evidence": {"summary": {"all_gathers": 1}}, "install": {"python": "3.11"},
                      "host": {"name": "box", "machine_id": "abc123abc123"}, "reproduce": "nox -s scaling-0.6.0",
                      "created": "2026-12-01T00:00:00Z", "identity": {"schema": 2}}
    assert validate(record) == record
    assert Record(record).verdict is Verdict.AFFECTED


def test_explain_s_own_states_are_written_by_the_same_constructor() -> None:
    head = _head(subject={"kind": "explain", "program": "train.py", "args": []}, identity=None)
    record = new_record(head, RunOutcome(Status.PARTIAL, None, "it crashed after compiling"), modules=[])
    assert json.loads(json.dumps(record))["status"] == "partial"
    assert "identity" not in record and record["kind"] == "explain"
