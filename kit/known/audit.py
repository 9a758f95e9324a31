"""``audit``: which known problems does one installation have? (as ``pip-audit`` asks of vulnerabilities)

Every catalogue check runs on the installation (a release the kit installs, or
``--python`` as it is); each problem found is listed with the release the kit
measured fixing it and its workaround, beside what the measured range says of
that release: where the two disagree the table says so, and the run is the
answer for this installation. A problem whose check decided nothing is said as
untested, never as absent.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from ..json_types import JsonObject
from ..markdown_text import inert, text as md
from .catalogue import Entry
from .measured import (Measurement, Presence, compiled_not_run, load_measurements, measured_extra, measured_problem,
                       ranges)

@dataclass(frozen=True)
class AuditFinding:
    entry: Entry
    here: Measurement
    expected: bool | None
    """What the measured range says of this release (None: it does not reach it, or nothing measured)."""
    fixed_in: str | None
    open: bool
    unreadable: str = ""
    """Why the entry's known/measured/ID.json could not be read ("" when it could, or was never written)."""
    workaround_runs: object = None
    """known/measured/ID.json's ``workaround`` (``known --measure --workarounds``); None where it never ran."""

    @property
    def workaround(self) -> str:
        """The entry's workaround where something measured it working (its runs, or the entry's
        ``workaround_measured`` note); an unmeasured one is a claim no run made, said as that and not offered
        (frexp-sharded-jacobian's, offered unmeasured, does not work)."""
        if not self.entry.workaround:
            return "-"
        runs = self.workaround_runs if isinstance(self.workaround_runs, dict) else {}
        if runs.get("works_on") or self.entry.workaround_measured:
            return self.entry.workaround
        return "(workaround did not work where measured)" if runs.get("fails_on") else "(workaround not measured)"

    @property
    def applies(self) -> bool:
        return self.here.backend in self.entry.shows_on

    @property
    def outcome_text(self) -> str:
        """``present``, or ``present, compiled for TPU v5e 2x2 (4 devices), not run`` for a target's run."""
        said = self.here.outcome.value if self.applies else f"not applicable on {self.here.backend}"
        return f"{said}, {compiled_not_run(self.here.target)}" if self.here.target else said

    def to_json(self) -> JsonObject:
        aimed = {"target": self.here.target, "compiled_not_run": compiled_not_run(self.here.target)} \
            if self.here.target else {}
        return {"id": self.entry.id, "title": self.entry.title, "kind": self.entry.kind, **aimed,
                "outcome": self.here.outcome.value if self.applies else "not-applicable",
                "reason": self.here.reason, "record": self.here.record, "measured_range_says":
                "unreadable" if self.unreadable else {True: "present", False: "absent", None: "unmeasured"}[self.expected],
                **({"measured_unreadable": self.unreadable} if self.unreadable else {}),
                "fixed_in": self.fixed_in, "open_upstream": self.open, "workaround": self.entry.workaround,
                "workaround_shown": self.workaround,
                "upstream": self.entry.upstream, "fix_commit": self.entry.fix_commit}


def finding(entry: Entry, here: Measurement, catalogue: Path) -> AuditFinding:
    """The run beside the entry's measured range on the same backend (compiled for the same target)."""
    unreadable = measured_problem(catalogue, entry.id)
    span = next((r for r in ranges(load_measurements(catalogue, entry.id))
                 if (r.backend, r.target) == (here.backend, here.target)), None)
    runs = measured_extra(catalogue, entry.id, "workaround")
    if span is None:
        return AuditFinding(entry, here, None, None, False, unreadable, runs)
    return AuditFinding(entry, here, span.holds(here.release), span.fixed_in, span.open, workaround_runs=runs)


def present(findings: Sequence[AuditFinding]) -> list[AuditFinding]:
    return [f for f in findings if f.applies and f.here.outcome is Presence.PRESENT]


def nothing_tested(findings: Sequence[AuditFinding]) -> bool:
    """No check that applies here decided anything (each untested): "none found" would be a verdict never made."""
    applies = [f for f in findings if f.applies]
    return bool(applies) and all(f.here.outcome is Presence.UNTESTED for f in applies)


def verdict_line(findings: Sequence[AuditFinding], installation: str) -> str:
    found = present(findings)
    untested = [f for f in findings if f.applies and f.here.outcome is Presence.UNTESTED]
    said = f"; untested: {', '.join(f.entry.id for f in untested)}" if untested else ""
    if nothing_tested(findings):
        reasons = Counter(shown(f.here.reason) for f in untested).most_common(1)
        return (f"{installation}: nothing tested: none of the {len(untested)} checks decided anything here, so no "
                f"problem is known present or absent ({reasons[0][0]})")
    if not found:
        return f"{installation}: none of the {len(findings)} known problems found{said}"
    return f"{installation}: {len(found)} of {len(findings)} known problems present: " \
           f"{', '.join(f.entry.id for f in found)}{said}"


def table(findings: Sequence[AuditFinding]) -> list[str]:
    """The markdown table, one row per problem (present first)."""
    order = sorted(findings, key=lambda f: (f.here.outcome is not Presence.PRESENT, f.entry.id))
    rows = ["| problem | here | measured range says | safe release | workaround |", "|---|---|---|---|---|"]
    for f in order:
        here = f.outcome_text
        says = f.unreadable or {True: "present", False: "absent", None: "not measured near this release"}[f.expected]
        if f.expected is not None and f.applies and f.here.outcome is not Presence.UNTESTED \
                and f.expected != (f.here.outcome is Presence.PRESENT):
            says += " (differs from this run: the run is the answer here)"
        safe = safe_release(f)
        rows.append(f"| {md(f.entry.id)}: {md(f.entry.title)} | {md(here)} ({md(shown(f.here.reason))}) | {md(says)} "
                    f"| {md(safe)} | {md(f.workaround)} |")
    return rows


def safe_release(f: AuditFinding) -> str:
    """``jax >= 0.4.36``, ``none yet (open)``, or why the kit cannot say."""
    if f.fixed_in:
        return f"jax >= {f.fixed_in}"
    if f.open:
        return "none yet (open)"
    return "cannot tell (its measurements cannot be read)" if f.unreadable else "not measured"


def console_table(findings: Sequence[AuditFinding]) -> list[str]:
    """The problems present, as pip-audit prints its table: each with the safe release and the workaround."""
    found = present(findings)
    if not found:
        return []
    rows = [(f.entry.id, safe_release(f), shown(f.workaround, 200)) for f in found]
    wide = [max(len(row[i]) for row in [("problem", "safe release", ""), *rows]) for i in (0, 1)]
    return [f"{'problem':<{wide[0]}}  {'safe release':<{wide[1]}}  workaround",
            f"{'-' * wide[0]}  {'-' * wide[1]}  {'-' * 10}",
            *(f"{name:<{wide[0]}}  {safe:<{wide[1]}}  {workaround}" for name, safe, workaround in rows)]


def shown(reason: str, limit: int = 160) -> str:
    """A run's reason as one inert line: no terminal escapes or bidirectional overrides, at most ``limit``."""
    flat = inert(reason.replace("\n", " "))
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def not_run_lines(skipped: Sequence[Entry], target_name: str, where: str) -> list[str]:
    """Why the catalogue's other entries were not run: by their own targets, or on CPU when one is audited."""
    if not skipped:
        return []
    on_cpu = [e.id for e in skipped if not e.targets]
    aimed = [e for e in skipped if e.targets]
    lines = []
    if target_name and on_cpu:
        lines.append(f"not run for {target_name}: {len(on_cpu)} entries whose checks run on CPU host devices, not "
                     f"compiled for a chip ({', '.join(on_cpu)}); jax-kit audit {where} runs them")
    for entry in aimed:
        names = ", ".join(t.name for t in entry.targets)
        lines.append(f"not run{' for ' + target_name if target_name else ' here'}: {entry.id} is compiled only for "
                     f"{names}, never run (jax-kit audit {where} --target {entry.targets[0].name})")
    return lines
