"""What became of one run, as one frozen value: its status, the verdict on it, why, and the evidence.

Every step of a run (the exit code read, a failure classed, KIT_RESULT
added, JAX found unable to run, the kit's own files changed under it,
explain's fingerprints judged) takes an `RunOutcome` and gives one back; an
override is a named step (a function from outcome to outcome), never a
rewrite of a record's fields. The record is made from the last one
(`kit.records.making.new_record`). Evidence stays an open mapping: a check
may report anything, and it goes into the record as it is.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace

from ..json_types import JsonObject, as_object
from .verdict import Status, Verdict


@dataclass(frozen=True)
class RunOutcome:
    """One run's outcome; ``environment``, ``metrics`` and ``parameters`` are what the run said of itself
    (None: it said nothing, and the record keeps what the kit knew before it ran)."""

    status: Status
    verdict: Verdict | None = None
    """None where nothing was judged (the run did not finish)."""
    reason: str = ""
    evidence: JsonObject = field(default_factory=dict)
    environment: JsonObject | None = None
    metrics: JsonObject | None = None
    parameters: JsonObject | None = None

    # The named steps every override is made of.
    def with_evidence(self, **more: object) -> RunOutcome:
        """The same outcome with ``more`` added to its evidence (a later step's word wins)."""
        return replace(self, evidence={**self.evidence, **more})

    def judged(self, verdict: Verdict, reason: str, **evidence: object) -> RunOutcome:
        """It ran, and ``verdict`` is what it found; ``reason`` says why."""
        return replace(self, status=Status.RAN, verdict=verdict, reason=reason, evidence={**self.evidence, **evidence})

    def inconclusive(self, reason: str, **evidence: object) -> RunOutcome:
        """It ran as far as it could, and what it found decides nothing (`Verdict.INCONCLUSIVE`)."""
        return self.judged(Verdict.INCONCLUSIVE, reason, **evidence)

    def with_reason(self, reason: str) -> RunOutcome:
        return replace(self, reason=reason)

    def ran_on(self, environment: Mapping[str, object]) -> RunOutcome:
        """The same outcome, with what the run says of the machine it ran on."""
        return replace(self, environment=dict(environment))

    @property
    def ran(self) -> bool:
        return self.status is Status.RAN

    def evidence_object(self, key: str) -> JsonObject:
        """``evidence[key]`` where it is an object, else empty (a check may put anything there)."""
        return as_object(self.evidence.get(key))

    def to_json(self) -> JsonObject:
        """The record's fields this outcome decides (status, verdict, reason, evidence, and what the run said)."""
        fields: JsonObject = {"status": self.status, "verdict": self.verdict, "reason": self.reason,
                              "evidence": dict(self.evidence)}
        sections = {"environment": self.environment, "metrics": self.metrics, "parameters": self.parameters}
        fields.update({name: dict(value) for name, value in sections.items() if value is not None})
        return fields

    @classmethod
    def from_json(cls, data: Mapping[str, object]) -> RunOutcome:
        """`to_json`'s object back (a run kept on disk); ValueError where its status or verdict is no word of the
        kit's."""
        status, verdict, reason = Status(data.get("status")), data.get("verdict"), data.get("reason")
        sections = {name: as_object(data[name]) if name in data else None
                    for name in ("environment", "metrics", "parameters")}
        return cls(status, None if verdict is None else Verdict(verdict), reason if isinstance(reason, str) else "",
                   as_object(data.get("evidence")), sections["environment"], sections["metrics"],
                   sections["parameters"])
