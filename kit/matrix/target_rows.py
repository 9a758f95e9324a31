"""The matrix's rows for chips compiled for and not run (``--target``): per target and check, each release's verdict.

A record of ``nox -s scaling-V -- --target tpu:v5e:2x2`` is never the ``tpu``
backend's cell (it ran on a CPU; nothing ran on the chip): its parameters
differ from matrix.toml's, so it is an ad-hoc run. Here those records get rows
of their own, newest per (target, check, release), and a line per target and
check that says what the records answer for that chip, and that they were
compiled for it, not run. The checks a target cannot answer (they need the
chip to run: correctness, a script check) and the timings are said untested
for it, so a reader never takes a missing row for a pass.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Collection, Iterable, Mapping

from repro.parameters import target_of

from ..records import LoadedRecord, Status, Verdict, release_key


@dataclass
class TargetCell:
    target: str
    """The target's name (``tpu:v5e:2x2``)."""
    title: str
    """``TPU v5e 2x2 (4 devices)``."""
    check: str
    release: str
    status: str
    verdict: str
    reason: str
    created: str
    file: str
    reproduce: str

    @property
    def compiled_not_run(self) -> str:
        """``compiled for TPU v5e 2x2 (4 devices), not run``: where every verdict in its row came from."""
        return f"compiled for {self.title}, not run"


@dataclass
class TargetAnswer:
    title: str
    check: str
    sentence: str


def compiled_for(parameters: Mapping[str, object]) -> Mapping[str, object] | None:
    """The target a record was compiled for (None: it ran where it says)."""
    try:
        return target_of(parameters.get("target"))
    except ValueError:
        return None


def target_cells(entries: Iterable[LoadedRecord]) -> list[TargetCell]:
    """The newest record per (target, check, release), in target, check and release order."""
    newest: dict[tuple[str, str, str], TargetCell] = {}
    for entry in entries:
        record = entry.record
        target = compiled_for(record.parameters)
        if target is None:
            continue
        cell = TargetCell(target=str(target.get("name")), title=str(target.get("title")), check=record.check,
                          release=record.jax, status=str(record.status), verdict=str(record.verdict or ""),
                          reason=record.reason, created=record.created, file=entry.path.name,
                          reproduce=record.reproduce)
        key = (cell.target, cell.check, cell.release)
        if key not in newest or newest[key].created < cell.created:
            newest[key] = cell
    return sorted(newest.values(), key=lambda c: (c.target, c.check, release_key(c.release)))


UNTESTED = "untested: it needs the chip to run, and a target is compiled for, never run"
TIMINGS_UNTESTED = "untested: nothing runs on the chip, so nothing is timed"


def target_answers(cells: list[TargetCell], checks: Collection[str] = ()) -> list[TargetAnswer]:
    """Per target and check: the lowest release that passes there, or that none measured does; then, per
    target, each of ``checks`` (matrix.toml's) with no record for it, and the timings, as untested there."""
    answers = []
    for target, check in dict.fromkeys((c.target, c.check) for c in cells):
        mine = [c for c in cells if (c.target, c.check) == (target, check)]
        judged = [c for c in mine if c.status == Status.RAN and c.verdict in (Verdict.AFFECTED, Verdict.UNAFFECTED)]
        passing = [c.release for c in judged if c.verdict == Verdict.UNAFFECTED]
        affected = [c.release for c in judged if c.verdict == Verdict.AFFECTED]
        newest_bad = max(affected, key=release_key) if affected else None
        safe = [r for r in passing if newest_bad is None or release_key(r) > release_key(newest_bad)]
        if not judged:
            said = "no release could be judged (the rows say why)"
        elif safe:
            said = f"lowest measured release passing: {min(safe, key=release_key)} (compiled for it, not run)"
        else:
            said = (f"no measured release passes ({', '.join(affected)} affected): no release is safe to pick "
                    "there (compiled for it, not run)")
        answers.append(TargetAnswer(title=mine[0].title, check=check, sentence=said))
        if check == cells_of_target(cells, target)[-1].check:  # the target's last check: what it leaves untested
            answered = {c.check for c in cells if c.target == target}
            answers += [TargetAnswer(mine[0].title, other, UNTESTED) for other in checks if other not in answered]
            answers.append(TargetAnswer(mine[0].title, "timings", TIMINGS_UNTESTED))
    return answers


def cells_of_target(cells: list[TargetCell], target: str) -> list[TargetCell]:
    return [c for c in cells if c.target == target]
