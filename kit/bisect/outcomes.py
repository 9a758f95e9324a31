"""What one release did, and the one place that becomes good / bad / skip.

An :class:`Observation` is the raw fact (a record's status and verdict, a
script's exit code read the ``git bisect run`` way); :func:`classify` maps it
to the search's :class:`~kit.bisect.search.Outcome`. Every rule about what
counts as good, bad or skip lives in that one function, so a new kind of
evidence (a measured metric) adds a branch there and nowhere else.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields
from typing import Any, Mapping, Sequence

from .search import Outcome

CRASH_MODES = {"skip": Outcome.SKIP, "bad": Outcome.BAD, "good": Outcome.GOOD}


@dataclass
class Observation:
    """What one release did, before it is mapped to an outcome."""

    status: str
    """``ran``, ``not-installable``, ``crashed`` or ``timed-out``, as in a record."""
    verdict: str | None
    """``affected``, ``unaffected``, ``inconclusive`` (checks) or ``untestable`` (a script's 125)."""
    reason: str
    source: str = "run"
    """``run`` (measured now) or ``record`` (a current record of an earlier run)."""
    runs: list[str] = field(default_factory=list)
    """Each run's verdict or status, in order, when there was more than one."""
    flipped: bool = False
    environment: str | None = None
    """``built`` or ``reused`` when this probe prepared the release's environment; None when it did not."""
    samples: list[float] = field(default_factory=list)
    """``--metric``: every sample measured for this release (a metric's verdict is its step decision)."""

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Observation:
        """Read back a saved observation; keys this kit does not know are dropped."""
        known = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in known})


def classify(observation: Observation, crash: str) -> Outcome:
    """Map one observation to the search's outcome.

    unaffected → GOOD, affected → BAD, inconclusive (after its re-run) or a
    script's 125 → SKIP, not installable → SKIP, crashed or timed out → as
    ``--crash`` says.
    """
    if observation.status in ("crashed", "timed-out"):
        return CRASH_MODES[crash]
    if observation.status != "ran":
        return Outcome.SKIP
    return {"unaffected": Outcome.GOOD, "affected": Outcome.BAD}.get(observation.verdict or "", Outcome.SKIP)


def script_observation(code: int | None, timeout: int) -> Observation:
    """A script's exit code, as ``git bisect run`` reads it (None: it timed out)."""
    if code is None:
        return Observation("timed-out", None, f"the script did not finish within {timeout} s")
    if code < 0 or code > 127:
        signal_no = -code if code < 0 else code - 128
        return Observation("crashed", None, f"the script was killed by signal {signal_no}")
    if code == 0:
        return Observation("ran", "unaffected", "the script exited 0 (good)")
    if code == 125:
        return Observation("ran", "untestable", "the script exited 125 (cannot test this release: skip)")
    return Observation("ran", "affected", f"the script exited {code} (bad)")


def settle(runs: Sequence[Observation]) -> Observation:
    """One observation from several looks at the same release.

    The first conclusive look counts; later looks (``--confirm``) must agree
    with it, or the release is noisy: reported as flipped, and skipped.
    """
    labels = [r.verdict or r.status for r in runs]
    source = "+".join(dict.fromkeys(r.source for r in runs))  # "record+run": a record, then a re-run
    conclusive = [r for r in runs if r.verdict in ("affected", "unaffected")]
    if not conclusive:
        last = runs[-1]
        return Observation(last.status, last.verdict, last.reason, source, labels if len(runs) > 1 else [])
    counted = conclusive[0]
    if any(r.verdict != counted.verdict for r in conclusive[1:]):
        reason = f"the verdict changed between runs ({', '.join(labels)}): too noisy to count"
        return Observation("ran", "inconclusive", reason, source, labels, flipped=True)
    flipped = len(runs) > 1 and runs[0].verdict == "inconclusive"
    return Observation(counted.status, counted.verdict, counted.reason, source,
                       labels if len(runs) > 1 else [], flipped)


def describe(outcome: Outcome, script: bool) -> str:
    """The outcome in the user's words: a check's verdict is named too."""
    if outcome is Outcome.SKIP:
        return "skip"
    if script:
        return outcome.value
    return {Outcome.GOOD: "good (unaffected)", Outcome.BAD: "bad (affected)"}[outcome]
