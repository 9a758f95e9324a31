"""The Answer counts only what has a verdict, and names what holds a release back.

One crashed cell of a user check, a check with no verdict on any release,
made the answer read "no measured release passes every check (scaling,
correctness)" while 0.6.0 passed both. Such a check is now left out of the
count and named as left out; a counted check's crash still holds its
release back, and the answer says so. docs/faults.md, "Values and records".
"""

from __future__ import annotations

from typing import Any

from kit import __version__, records
from kit.matrix.markdown import render_answer
from kit.matrix.model import build_report


def _record(check: str, jax: str, status: str, verdict: str | None = None) -> dict[str, Any]:
    return {"schema": records.SCHEMA, "kit_version": __version__, "check": check,
            "requested": {"jax": jax, "backend": "cpu", "preset": None}, "status": status, "verdict": verdict,
            "reason": "measured" if status == "ran" else "the script was killed by signal 9",
            "environment": {"backend": "cpu", "device_count": 4},
            "install": {"python": "3.11", "requirements": [f"jax[cpu]=={jax}", "scipy"]},
            "parameters": {}, "evidence": {"summary": {}},
            "host": {"name": "here", "machine_id": records.machine_id()}, "created": "2026-01-01T00:00:00Z"}


def _sweep(*more: dict[str, Any]) -> list[dict[str, Any]]:
    """0.5.0 affected by scaling, 0.6.0 passing scaling and correctness."""
    return [_record("scaling", "0.5.0", "ran", "affected"), _record("correctness", "0.5.0", "ran", "unaffected"),
            _record("scaling", "0.6.0", "ran", "unaffected"), _record("correctness", "0.6.0", "ran", "unaffected"),
            *more]


def test_a_check_without_any_verdict_is_left_out_of_the_count_and_named() -> None:
    report = build_report(_sweep(_record("mine", "0.6.0", "crashed")))
    [answer] = report.backends
    assert (answer.checks, answer.lowest_passing, answer.newest_passing) == (["scaling", "correctness"], "0.6.0", "0.6.0")
    assert answer.uncounted == ["mine (crashed on 0.6.0)"]
    assert ("- **cpu**: lowest release passing every check (scaling, correctness): **0.6.0** (not counted, no "
            "verdict on any release: mine (crashed on 0.6.0))") in render_answer(report)


def test_a_counted_check_that_crashed_is_named_as_what_holds_the_release_back() -> None:
    crashed = _record("correctness", "0.6.0", "crashed")
    report = build_report([r for r in _sweep() if (r["check"], r["requested"]["jax"]) != ("correctness", "0.6.0")]
                          + [crashed])
    [answer] = report.backends
    assert answer.lowest_passing is None
    assert answer.newest_blocked == ["correctness crashed"]
    assert ("- **cpu**: no measured release passes every check (scaling, correctness); the newest, 0.6.0, has "
            "correctness crashed; measured: 0.5.0, 0.6.0") in render_answer(report)
