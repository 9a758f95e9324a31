"""What an audit with ``--harvested`` says of each harvested entry: its verdict here, the safe release its measured
range gives, and the fix's title, for the console's table and the written report.

The held-out trial t5 found the report and the console's table of an audit with ``--harvested`` holding the hand
entries only ("13 of 34 known problems present" where 26 harvested problems were also present here): a user or a
CI job reading either never saw them or the release that fixes them.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from ...json_types import JsonObject, as_list, as_object
from ...markdown_text import inert
from ...markdown_text import text as md
from ..measured import Presence
from .kinds import FEATURE
from .listing import harvested_entries
from .release_runs import ReleaseProbe


@dataclass(frozen=True)
class HarvestedVerdict:
    """One harvested entry audited here."""

    id: str
    outcome: Presence
    reason: str
    safe: str
    """``jax >= 0.10.2`` where the entry's bisected range found the fix, else why none is said."""
    title: str
    commit: str
    kind: str = ""

    @property
    def problem(self) -> bool:
        """Present here, and a problem: a feature the fix added is only lacking (`kinds.FEATURE`)."""
        return self.outcome is Presence.PRESENT and self.kind != FEATURE

    def to_json(self) -> JsonObject:
        return {"id": self.id, "outcome": self.outcome.value, "reason": self.reason, "safe_release": self.safe,
                "title": self.title, "fix_commit": self.commit, "kind": self.kind}


def harvested_verdicts(catalogue: Path, probes: Sequence[tuple[str, ReleaseProbe]]) -> list[HarvestedVerdict]:
    """``probes`` (entry id, its probe here) with each entry's title, fix and safe release; present first."""
    known = {str(e["id"]): e for e in harvested_entries(catalogue)}
    verdicts = []
    for entry_id, probe in probes:
        entry = known.get(entry_id, {})
        verdicts.append(HarvestedVerdict(entry_id, probe.outcome, probe.reason, safe_release(entry),
                                         str(entry.get("title", "")),
                                         str(entry.get("fix_commit") or entry.get("commit", "")),
                                         str(entry.get("kind") or "")))
    order = {Presence.PRESENT: 0, Presence.UNTESTED: 1, Presence.ABSENT: 2}
    return sorted(verdicts, key=lambda v: (order.get(v.outcome, 3), v.id))


def safe_release(entry: JsonObject) -> str:
    """The first release the entry's range found fixed (``jax >= X``), else why there is none to say."""
    ranges = as_object(entry.get("ranges"))
    if not ranges:
        return "not measured (its range is not bisected yet)"
    fixed = as_object(ranges.get("fixed"))
    after = fixed.get("after")
    if isinstance(after, str) and after:
        # Releases between the last present and the first fixed that no probe decided may hold the fix already
        # (t11: harvest-672ee47b0f fixed in 0.6.1, said "jax >= 0.7.2" to a user on 0.6.1, untested there).
        unknown = [str(v) for v in as_list(fixed.get("unknown"))]
        if unknown:
            between = unknown[0] if len(unknown) == 1 else f"{unknown[0]} to {unknown[-1]}"
            return f"jax >= {after} (measured; {between} untested, may be fixed)"
        return f"jax >= {after}"
    return f"not known ({ranges.get('summary') or 'no release measured fixed'})"


def verdict_sentence(verdicts: Sequence[HarvestedVerdict]) -> str:
    """``harvested: 26 of 103 present, 1 absent, 76 untested`` (the hand entries' verdict line says theirs)."""
    counts = {p: sum(1 for v in verdicts if v.outcome is p) for p in Presence}
    lacking = sum(1 for v in verdicts if v.outcome is Presence.PRESENT and not v.problem)
    return (f"harvested: {counts[Presence.PRESENT] - lacking} of {len(verdicts)} present, "
            + (f"{lacking} features added later lacking, " if lacking else "")
            + f"{counts[Presence.ABSENT]} absent, {counts[Presence.UNTESTED]} untested")


def console_rows(verdicts: Sequence[HarvestedVerdict], width: int = 100) -> list[str]:
    """The harvested problems present, as the hand table prints them: the id, the safe release, the fix's title."""
    found = [v for v in verdicts if v.problem]
    if not found:
        return []
    wide = [max(len(row[i]) for row in [("harvested problem", "safe release"), *((v.id, v.safe) for v in found)])
            for i in (0, 1)]
    return [f"{'harvested problem':<{wide[0]}}  {'safe release':<{wide[1]}}  fixed by",
            f"{'-' * wide[0]}  {'-' * wide[1]}  {'-' * 8}",
            *(f"{v.id:<{wide[0]}}  {v.safe:<{wide[1]}}  {_short(v.title, width)}" for v in found)]


def harvested_json(verdicts: Sequence[HarvestedVerdict]) -> JsonObject:
    """The audit JSON's ``harvested``: the verdict, the ids present, each entry's row."""
    return {"verdict": verdict_sentence(verdicts), "present": [v.id for v in verdicts if v.problem],
            "entries": [v.to_json() for v in verdicts]}


def markdown_rows(verdicts: Sequence[HarvestedVerdict]) -> str:
    """The report's section of harvested entries ("" for none), to follow the hand entries' table."""
    if not verdicts:
        return ""
    return "\n".join(["", f"## Harvested entries ({verdict_sentence(verdicts)})", "",
                      "| entry | here | safe release | fixed by | why |", "|---|---|---|---|---|",
                      *(f"| {v.id} | {_said(v)} | {md(v.safe)} | {md(_short(v.title, 100))} | "
                        f"{md(_short(v.reason, 160))} |" for v in verdicts), ""])


def _said(verdict: HarvestedVerdict) -> str:
    return "lacks the feature" if verdict.outcome is Presence.PRESENT and not verdict.problem else verdict.outcome.value


def _short(text: str, limit: int) -> str:
    """One inert line (a commit's title is from outside), at most ``limit`` characters."""
    flat = " ".join(inert(text).split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"
