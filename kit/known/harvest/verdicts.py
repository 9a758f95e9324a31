"""What a confirming pair shows, per test and per commit, and the entry a commit becomes.

Per test, the fix's outcome and the parent's on one build:

* ``confirmed``: fails at the parent, passes at the fix (a failed case; a
  file that does not import at the parent is not a failure of the test);
* ``binary``: passes at both: the overlay does not show the bug, so the fix
  is in the compiled jaxlib or elsewhere the overlay does not reach, or the
  test does not tell the two apart on CPU (binary, unconfirmed by overlay,
  with what was seen; ``changes_python`` false says the fix is compiled only);
* ``unrun``: the fix's own test did not pass here (skipped on CPU, fails on
  this build, or not collected), or the parent could not import the test file.

A commit is an entry when one of its tests is confirmed (status
``confirmed``) or else one is binary (``binary``); otherwise it is ``unrun``
with each test's reason, kept so that the yield can say why.
"""

from __future__ import annotations

from ...json_types import JsonObject, as_list, as_object
from ...markdown_text import inert
from .candidates import HarvestCandidate
from .pytest_run import FAILED, PASSED, SKIPPED, UNCOLLECTED, TestOutcome

CONFIRMED, BINARY, UNRUN = "confirmed", "binary", "unrun"

ACCELERATOR_WORDS = ("gpu", "tpu", "cpu", "mosaic", "backend", "cudnn", "ampere", "interpret mode")
"""A skip that names one of these is a test for a chip this CPU build is not (JAX's own skip messages, 2026)."""


def test_verdict(fix: TestOutcome, parent: TestOutcome) -> tuple[str, str]:
    """``(verdict, why)`` for one test function (see the module's docstring)."""
    if fix.outcome == SKIPPED:
        return UNRUN, f"skipped at the fix here: {fix.message}"
    if fix.outcome == UNCOLLECTED:
        return UNRUN, f"not collected at the fix: {fix.message}"
    if fix.outcome == FAILED:
        return UNRUN, f"fails at the fix on this build: {fix.message}"
    if parent.outcome == FAILED:
        return CONFIRMED, parent.message
    if parent.outcome == PASSED:
        return BINARY, ("passes at the parent too on this build: binary, unconfirmed by overlay (the fix is in the "
                        "compiled part, or the test does not tell the parent from the fix here)")
    if parent.outcome == UNCOLLECTED:
        return UNRUN, f"the fix's test file does not import at the parent: {parent.message}"
    return UNRUN, f"skipped at the parent here: {parent.message}"


def commit_status(verdicts: list[str]) -> str:
    return CONFIRMED if CONFIRMED in verdicts else BINARY if BINARY in verdicts else UNRUN


def entry_id(candidate: HarvestCandidate) -> str:
    return f"harvest-{candidate.commit[:10]}"


def commit_result(candidate: HarvestCandidate, build: JsonObject, laid: str, tests: list[JsonObject], seconds: float,
                  problem: str = "") -> JsonObject:
    """What the harvest keeps of one commit: the entry (or why none), with its provenance and its pair."""
    status = commit_status([str(t["verdict"]) for t in tests]) if not problem else UNRUN
    return {"id": entry_id(candidate), "harvested": True, "status": status,
            "title": inert(candidate.title)[:300], "commit": candidate.commit, "parent": candidate.parent,
            "date": candidate.date, "upstream": candidate.issue, "changes_python": candidate.python_code, "fix_commit": candidate.commit,
            "tests": tests, "build": build, "laid": laid, "problem": problem, "seconds": round(seconds, 1),
            "ranges": None}


def unrun_reasons(results: list[JsonObject]) -> dict[str, int]:
    """Why the unrun commits came to nothing, counted by kind: the yield's "unrun and why"."""
    counted: dict[str, int] = {}
    for result in results:
        if result.get("status") != UNRUN:
            continue
        problem = str(result.get("problem") or "")
        whys = [str(as_object(row).get("why", "")) for row in as_list(result.get("tests"))]
        kind = _kind(problem) if problem else _kind(whys[0] if whys else "no test")
        counted[kind] = counted.get(kind, 0) + 1
    return dict(sorted(counted.items(), key=lambda item: -item[1]))


def _kind(why: str) -> str:
    if why.startswith("skipped") and any(word in why.lower() for word in ACCELERATOR_WORDS):
        return "skipped on CPU (needs a GPU or TPU)"
    if "requires jaxlib" in why or "jaxlib v" in why:
        return "skipped: needs a newer jaxlib than the build"
    for start, kind in (("skipped", "skipped here (other reason)"), ("fails at the fix", "fails at the fix on this build"),
                        ("not collected", "not collected at the fix"),
                        ("the fix's test file does not import", "the test file does not import at the parent"),
                        ("it adds or changes no test", "no test function changed"),
                        ("JAX cannot run", "JAX cannot run on the build")):
        if why.startswith(start):
            return kind
    return "does not accept the build's jaxlib" if "does not accept jaxlib" in why else "other"
