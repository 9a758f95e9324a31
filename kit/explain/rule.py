"""The one rule from the per-release tables to the answer: which measured release splits which op, and what to pick.

Every answer line about releases (per op, and for the program on the platform or
target) is derived here, from the same table the reports print: per op (source
line, function, op, pass), its state on each measured release, and per release
how many of the program's computations could not be looked at. So the answer
cannot contradict the tables above it (issue 58: "no measured release splits lu"
under a table whose 0.5.3 column said split). What it may and may not say:

* a release is *clean* where it compiled, every op it holds is split and
  nothing of it went unseen (a computation the compiler refused, or one not
  exported): only a clean release is ever named safe, and "pick jax >= P"
  only where every measured release from P on is clean;
* per op, the lowest measured release that splits it, and where it holds
  the whole batch again after that;
* an op or release that could not be compiled is "cannot tell", never split;
* nothing is claimed of a release that was not measured: where none of the
  measured releases A..B splits an op, the answer says so and that releases
  after B were not measured, never "no release is safe".
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping, Sequence

SPLIT, WHOLE, UNTOLD = "split", "whole", "cannot tell"
"""The three states the rule knows: a gathered op is whole; a replicated or one-device op is not the rule's."""


@dataclass(frozen=True)
class OpRow:
    """One op across the measured releases: its state on each release that has it."""

    name: str
    """How the answer names it: ``train.py:39 lu`` (``(backward)`` added for the backward pass)."""
    states: Mapping[str, str]


@dataclass(frozen=True)
class Table:
    """The per-release tables as the rule reads them: the measured releases in order, oldest first."""

    releases: tuple[str, ...]
    rows: tuple[OpRow, ...]
    untold: Mapping[str, int] = field(default_factory=dict)
    """Per release, computations of the program nothing could be read of (not compiled, not exported)."""


@dataclass(frozen=True)
class OpAnswer:
    name: str
    first_split: str
    """The lowest measured release that splits it ("" where none does)."""
    whole_after: tuple[str, ...]
    """Measured releases after `first_split` that hold it whole again."""
    untold: tuple[str, ...]
    """Releases where it could not be told."""
    whole_on: tuple[str, ...]


@dataclass(frozen=True)
class Answer:
    clean: tuple[str, ...]
    """Measured releases where every op is split and nothing went unseen."""
    pick: str
    """The lowest measured release from which every measured release is clean ("" where there is none)."""
    ops: tuple[OpAnswer, ...]
    releases: tuple[str, ...]
    split_where_told: tuple[str, ...] = ()
    """Releases where no op is whole and some is split, but something could not be told: never clean."""


def derive(table: Table) -> Answer:
    """The answer the tables give, and nothing more."""
    clean = tuple(r for r in table.releases if _clean(table, r))
    pick = ""
    for release in reversed(table.releases):
        if release not in clean:
            break
        pick = release
    told = tuple(r for r in table.releases if r not in clean and _split_where_told(table, r))
    return Answer(clean, pick, tuple(_op(row, table.releases) for row in table.rows), table.releases, told)


def _split_where_told(table: Table, release: str) -> bool:
    held = [row.states[release] for row in table.rows if release in row.states]
    return SPLIT in held and WHOLE not in held


def _clean(table: Table, release: str) -> bool:
    if table.untold.get(release, 0):
        return False
    held = [row.states[release] for row in table.rows if release in row.states]
    return bool(held) and all(state == SPLIT for state in held)


def _op(row: OpRow, releases: Sequence[str]) -> OpAnswer:
    first = next((r for r in releases if row.states.get(r) == SPLIT), "")
    after = releases[releases.index(first) + 1:] if first else ()
    return OpAnswer(row.name, first, tuple(r for r in after if row.states.get(r) == WHOLE),
                    tuple(r for r in releases if row.states.get(r) == UNTOLD),
                    tuple(r for r in releases if row.states.get(r) == WHOLE))


def span(releases: Sequence[str]) -> str:
    """``0.5.1`` or ``0.5.1..0.6.0``: the measured releases as a range."""
    return releases[0] if len(releases) == 1 else f"{releases[0]}..{releases[-1]}"


def answer_line(answer: Answer, on: str = "", fix: str = "") -> str:
    """The program's answer in one line. ``on``: "for 4 NVIDIA A100 GPUs (compiled for it, not run)" or "";
    ``fix``: a known fix's release (a full match), cited only where no measured release at or past it is unclean."""
    releases = answer.releases
    where = f" {on}" if on else ""
    unclean_after_fix = [r for r in releases if fix and _order(r) >= _order(fix) and r not in answer.clean]
    if answer.pick:
        return _picked(answer, where, fix, unclean_after_fix)
    newest = releases[-1]
    if answer.clean:
        later = [r for r in releases if _order(r) > _order(answer.clean[-1])]
        return (f"answer: every op is split on {', '.join(answer.clean)}{where}, but not on {', '.join(later)} after "
                f"it: of the measured releases only {', '.join(answer.clean)} can be picked")
    never = [op.name for op in answer.ops if not op.first_split and op.whole_on]
    said = f"answer:{where + ',' if on else ''} "
    told = [r for r in releases if r in answer.split_where_told]
    if told and not never:  # split as far as it could be told: said, and never picked
        return (said + f"every op that compiled is split on {', '.join(told)}, but what could not be compiled there "
                f"cannot be told, so no measured release of {span(releases)} is known to split every op; releases "
                f"after {newest} were not measured")
    if never:
        more = f" and {len(never) - 3} more op(s)" if len(never) > 3 else ""
        ops = ", ".join(never[:3]) + more
        said += (f"the measured release {releases[0]} does not split {ops}" if len(releases) == 1
                 else f"none of the measured releases {span(releases)} splits {ops}")
    elif any(op.untold for op in answer.ops) or any(answer_untold(answer, r) for r in releases):
        said += f"no measured release of {span(releases)} can be told to split every op (some could not be compiled)"
    else:
        said += f"no measured release of {span(releases)} splits every op at once"
    said += f"; releases after {newest} were not measured"
    if fix and _order(fix) > _order(newest):
        said += f"; the known fix is in {fix}: try jax >= {fix}"
    return said


def answer_untold(answer: Answer, release: str) -> bool:
    """Whether something of ``release`` could not be told (an op, or the release not clean with every op split)."""
    return any(release in op.untold for op in answer.ops)


def _picked(answer: Answer, where: str, fix: str, unclean_after_fix: Sequence[str]) -> str:
    releases, lowest = answer.releases, answer.pick
    if fix and not unclean_after_fix and _order(fix) < _order(lowest):
        return (f"answer: every op is split on {lowest} (the lowest measured){where}; the known fix is in {fix}: "
                f"pick jax >= {fix}")
    if lowest == releases[0] and len(releases) > 1:
        said = f"answer: every op is split on every measured release from {lowest}{where}"
    elif len(releases) == 1:
        said = f"answer: every op is split on {lowest}{where}"
    else:
        said = f"answer: every op is split on {lowest}{where}: pick jax >= {lowest} of those measured"
    if unclean_after_fix:  # why the known fix is not the pick
        said += f"; {max(unclean_after_fix, key=_order)}, above the known fix in {fix}, still holds ops whole"
    return said


def op_line(answer: Answer, shown: int = 4) -> str:
    """Per op that is not split on every measured release, grouped by what the tables say of it: the lowest
    measured release that splits it, none of them, whole again after, cannot tell ("" where there is nothing to
    say beyond the answer: every op split from the release it picks)."""
    releases = answer.releases
    if answer.pick and all(op.first_split == answer.pick and not op.untold for op in answer.ops):
        return ""  # the answer's own release is each op's: nothing more to say
    groups: dict[str, list[str]] = {}
    for op in answer.ops:
        if op.first_split == releases[0] and not op.whole_after and not op.untold:
            continue  # split on every measured release it is in
        if op.whole_after:
            groups.setdefault(f"split on {op.first_split}, whole again on {', '.join(op.whole_after)}",
                              []).append(op.name)
        elif op.first_split and op.whole_on:
            groups.setdefault(f"split from {op.first_split}", []).append(op.name)
        elif op.whole_on:
            groups.setdefault(f"split on none of {span(releases)}", []).append(op.name)
        if op.untold:
            groups.setdefault(f"cannot tell on {', '.join(op.untold)} (not compiled)", []).append(op.name)
    if not groups or list(groups) == [f"split on none of {span(releases)}"]:
        return ""  # nothing split anywhere: the answer line names those ops itself
    parts = [f"{how}: {', '.join(names[:shown])}" + (f" and {len(names) - shown} more" if len(names) > shown else "")
             for how, names in groups.items()]
    return "per op, the lowest measured release that splits it: " + "; ".join(parts)


def _order(version: str) -> tuple[int, ...]:
    return tuple(int(part) if part.isdigit() else 0 for part in version.split("."))
