"""What a ``--metric`` bisect adds to its report: the baseline, each measured release's median, every step.

A typed value from the judge (`kit.bisect.probe.metric.metric_summary`) to the report's markdown and JSON.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

from ...json_types import JsonObject


@dataclass(frozen=True)
class MetricStep:
    """A step of at least the factor between two neighbouring measured releases."""

    before: str
    after: str
    ratio: float
    p: float


@dataclass(frozen=True)
class MetricSummary:
    """What a metric bisect adds to the report: the baseline, each measured release's median, every step."""

    metric: str
    unit: str
    factor: float
    worse: str
    step: float
    medians: dict[str, float]
    """Each measured release's median, in version order."""
    samples: dict[str, int]
    """How many samples each median rests on."""
    steps: list[MetricStep] = field(default_factory=list)

    def to_json(self) -> JsonObject:
        return asdict(self)
