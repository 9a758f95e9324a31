"""The problem a reduction keeps, read off the original program's runs; and whether a candidate still shows it.

Without ``--op`` it is the difference the kit finds between the two releases' runs (triage's outcomes,
kit/triage/block_outcome.py), with what differs between two runs of one release left out as noise
(random draws, timings, addresses). One kind decides, the first there is:

* ``exception``: the exception each side raised (its class and message, numbers masked), one side none;
* ``exit``: each side's exit code;
* ``value``: printed lines (numbers masked, a printed array one ``#``) whose numbers differ between the
  releases beyond the outcome's tolerance; a candidate keeps it where some such line still differs, with
  the same sides non-finite, by at least a tenth of the original's relative difference (or 1e-3): a
  reduction must not slide into rounding noise.

With ``--op`` it is explain's evidence for the op's line (kit/hlo: the fingerprint's state, e.g. the
whole batch on every device) on the bad release, and the other state the good release gives it.

Both ways, always: the bad release still shows it AND the good one still does not.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Sequence

from ..hlo import HOLDS_WHOLE, Fingerprint
import kit.triage.block_outcome as block_outcome  # the foundation's reader of outcomes (tests/test_layers.py)
from .runs import Seen
from .spread import apart, gap, nearest, steady

_RUN_OF_NUMBERS = re.compile(r"[\[\](){},\s]*#[\[\](){},#\s]*")
FLOOR = 1e-3
"""The relative difference a candidate may always keep, whatever the original's: above float32's rounding."""


def shape(template: str) -> str:
    """A line's template with every run of numbers (an array, a tuple of them) as one ``#``."""
    return " ".join(_RUN_OF_NUMBERS.sub(" # ", template).split())


def _numbers(outcome: block_outcome.BlockOutcome, kind: str) -> list[block_outcome.Number]:
    return [n for line in outcome["lines"] if shape(line[0]) == kind for n in line[1]]


def _shapes(outcome: block_outcome.BlockOutcome) -> list[str]:
    return list(dict.fromkeys(shape(line[0]) for line in outcome["lines"]))


def _finite(numbers: list[block_outcome.Number]) -> bool:
    return not any(isinstance(n, str) for n in numbers)


@dataclass(frozen=True)
class ValueSign:
    kind: str
    """The line's shape (`shape`)."""
    gap: float
    finite: tuple[bool, bool]
    """Whether the bad side's numbers, and the good side's, were all finite."""
    steady: tuple[bool, bool] = (True, True)
    """Whether the bad side, and the good side, printed the line alike on every run of the original (a side
    that did not varies from run to run: a time-seeded draw); `kit.reduce.spread`."""

    @property
    def kinds(self) -> tuple[str, ...]:
        return (self.kind,)

    def present(self, outcome: block_outcome.BlockOutcome) -> bool:
        return bool(_numbers(outcome, self.kind))

    def kept(self, bad: block_outcome.BlockOutcome, good: block_outcome.BlockOutcome) -> bool:
        return self.kept_over([bad], [good])

    def kept_over(self, bad: Sequence[block_outcome.BlockOutcome], good: Sequence[block_outcome.BlockOutcome]) -> bool:
        """Still a difference over these runs of each side: a side steady in the original's runs is steady in
        these, the two sides' values never meet (`spread.apart`), by at least a tenth of the original's
        relative difference (or `FLOOR`), with the same sides non-finite."""
        first, second = [_numbers(o, self.kind) for o in bad], [_numbers(o, self.kind) for o in good]
        if not all(first) or not all(second):
            return False
        if any(was and not steady(runs) for was, runs in zip(self.steady, (first, second))):
            return False
        if not (steady(first) and steady(second)) and not apart(first, second):
            return False
        seen = nearest(first, second)
        return (seen > 0 and seen >= min(self.gap / 10, FLOOR)
                and all((_finite(a), _finite(b)) == self.finite for a in first for b in second))


@dataclass(frozen=True)
class RunSign:
    """Lines one side prints alike on every run and the other side does not, taken together: each run of the
    varying side differs from the steady side's on at least one of them. A time-seeded draw may print the
    steady side's value on one line of one run (0.4.33's `acct` printed 64/64 for one quarter of one run in
    four), never on all of them: the line-by-line test (`ValueSign`) then keeps fewer lines from run to run,
    this one the same."""

    kinds: tuple[str, ...]
    steady: tuple[bool, bool]
    gap: float
    """The smallest, over the varying side's runs, of its largest relative difference from the steady side."""

    def present(self, outcome: block_outcome.BlockOutcome) -> bool:
        return any(_numbers(outcome, kind) for kind in self.kinds)

    def kept(self, bad: block_outcome.BlockOutcome, good: block_outcome.BlockOutcome) -> bool:
        return self.kept_over([bad], [good])

    def kept_over(self, bad: Sequence[block_outcome.BlockOutcome], good: Sequence[block_outcome.BlockOutcome]) -> bool:
        fixed, varying = (good, bad) if self.steady[1] else (bad, good)
        present = [k for k in self.kinds if all(_numbers(o, k) for o in (*bad, *good))]
        if not present or not all(steady([_numbers(o, k) for o in fixed]) for k in present):
            return False
        return all(_run_gap(run, fixed[0], present) >= min(self.gap / 10, FLOOR) for run in varying)


def _run_gap(run: block_outcome.BlockOutcome, other: block_outcome.BlockOutcome, kinds: Sequence[str]) -> float:
    return max(gap(_numbers(run, k), _numbers(other, k)) for k in kinds)


@dataclass(frozen=True)
class OpSign:
    """Explain's evidence for the op's line: on the bad release these (function, op, state), the good one's
    state for each (function, op)."""

    bad: tuple[tuple[str, str, str], ...]
    good: tuple[tuple[str, str, str], ...]

    def shown(self, prints: list[Fingerprint], lines: tuple[int, int] | None) -> set[tuple[str, str]]:
        here = at_lines(prints, lines)
        states = {(f.function, f.op, f.state.value) for f in here}
        return {(function, op) for function, op, state in self.bad if (function, op, state) in states}

    def spared(self, prints: list[Fingerprint], lines: tuple[int, int] | None, ops: set[tuple[str, str]]) -> bool:
        states = {(f.function, f.op, f.state.value) for f in at_lines(prints, lines)}
        return any((function, op, state) in states for function, op, state in self.good if (function, op) in ops)


def at_lines(prints: list[Fingerprint], lines: tuple[int, int] | None) -> list[Fingerprint]:
    """The fingerprints whose source line lies within ``lines`` (first, last) of the program."""
    if lines is None:
        return []
    out = []
    for f in prints:
        number = (f.location or "").rpartition(":")[2]
        if number.isdigit() and lines[0] <= int(number) <= lines[1]:
            out.append(f)
    return out


class Refused(Exception):
    """The program does not show a problem to reduce: one sentence."""


@dataclass(frozen=True)
class Problem:
    kind: str
    """``exception``, ``exit``, ``value`` or ``op``."""
    bad: Seen
    good: Seen
    values: tuple[ValueSign | RunSign, ...] = ()
    op: OpSign | None = None
    noise: tuple[str, ...] = ()
    repeats: int = 1
    """Runs a side a candidate must hold on before it is kept: more than one where the original's printed lines
    varied from run to run (`Tester` runs the others only for a candidate the first run keeps)."""

    def shown_on_bad(self, bad: Seen, lines: tuple[int, int] | None) -> bool:
        """A necessary condition, on the bad release's run alone (the good release need not run where it fails)."""
        if bad.timed_out:
            return False
        if self.kind == "op":
            assert self.op is not None
            return bool(self.op.shown(bad.fingerprints, lines))
        if _key(bad.outcome) != _key(self.bad.outcome):
            return False
        if self.kind == "exit":
            return bad.outcome["exit"] == self.bad.outcome["exit"]
        return self.kind == "exception" or any(v.present(bad.outcome) for v in self.values)

    def holds(self, bad: Seen, good: Seen, lines: tuple[int, int] | None) -> bool:
        """The bad release still shows the problem AND the good one still does not."""
        return self.holds_over([bad], [good], lines)

    def holds_over(self, bad: Sequence[Seen], good: Sequence[Seen], lines: tuple[int, int] | None) -> bool:
        """`holds` on every run of each side, a printed difference judged over them all (`ValueSign.kept_over`):
        where the original's lines varied from run to run, one run a side cannot tell a problem from noise."""
        if not all(self.shown_on_bad(run, lines) for run in bad) or any(run.timed_out for run in good):
            return False
        if self.kind == "op":
            assert self.op is not None
            return all(self.op.spared(g.fingerprints, lines, self.op.shown(b.fingerprints, lines))
                       for b, g in zip(bad, good))
        if any(_key(run.outcome) != _key(self.good.outcome) for run in good):
            return False
        if self.kind == "exception":
            return True
        if self.kind == "exit":
            return all(run.outcome["exit"] == self.good.outcome["exit"] for run in good)
        return any(v.kept_over([b.outcome for b in bad], [g.outcome for g in good]) for v in self.values)

    def sentence(self, runs: tuple[Seen, Seen] | None = None) -> str:
        """What differs, in words: as ``runs`` (the reduced program's, bad then good) show it, else as the
        original's runs did. A printed difference names the lines those runs differ in, every one."""
        bad, good = runs or (self.bad, self.good)
        if self.kind == "op":
            assert self.op is not None
            said = ", ".join(f"{op_named(function, op)} {state}" for function, op, state in self.op.bad)
            other = ", ".join(f"{op_named(function, op)} {state}" for function, op, state in self.op.good)
            return f"the op's line compiles as {said} on jax {bad.release}, {other or 'otherwise'} on jax {good.release}"
        if self.kind == "exception":
            return f"{_raised(bad)} on jax {bad.release}; {_raised(good)} on jax {good.release}"
        if self.kind == "exit":
            return f"exit {bad.outcome['exit']} on jax {bad.release}; exit {good.outcome['exit']} on jax {good.release}"
        kept = [v for v in self.values if runs is None or v.kept(bad.outcome, good.outcome)]
        kinds = [f"`{kind}`" for kind in dict.fromkeys(k for v in kept for k in v.kinds)]
        varying = [release for k, release in enumerate((bad.release, good.release))
                   if runs is None and any(not v.steady[k] for v in self.values)]
        return (f"printed values differ between jax {bad.release} and jax {good.release} in "
                + (listed(kinds) if kinds else "none of the lines the original's runs differed in")
                + (f" (jax {varying[0]}'s vary from run to run; none of its runs prints them as jax "
                   f"{good.release if varying[0] == bad.release else bad.release} does)" if varying else ""))


def op_named(function: str, op: str) -> str:
    """The function and the op it compiles to, once where they share a name (``eigh``, not ``eigh eigh``)."""
    return op if function == op else f"{function} {op}"


SHOWN = 3
"""Lines named in a sentence before the rest are counted."""


def listed(items: list[str]) -> str:
    """The first few of ``items``, and how many more where it is cut (a list is never cut unsaid)."""
    more = len(items) - SHOWN
    return "; ".join(items[:SHOWN]) + (f" and {more} more" if more > 0 else "")


def cut(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` characters at the end of a word, ``…`` where it was cut (never mid-word)."""
    if len(text) <= limit:
        return text
    head = text[:limit + 1].rsplit(None, 1)[0] if " " in text[:limit + 1] else text[:limit]
    return head.rstrip(" ,;:") + "…"


def _key(outcome: block_outcome.BlockOutcome) -> tuple[str, str] | None:
    raised = outcome.get("exception")
    return None if raised is None else (raised["type"], raised["message"])


def _raised(seen: Seen) -> str:
    raised = seen.outcome.get("exception")
    return "no exception" if raised is None else f"{raised['type']}: {cut(raised['text'], 200)}"


def found_problem(bad: Sequence[Seen], good: Sequence[Seen]) -> Problem:
    """The difference between the releases' runs (each run twice or more), as a `Problem`; `Refused` where there
    is none to keep (a program that behaves the same on both), or none the kit can tell from noise (what
    differs between the releases varies between runs of one, and the two sides' values meet)."""
    first, second = bad[0], good[0]
    if any(run.timed_out for run in (*bad, *good)):
        which = next(run for run in (*bad, *good) if run.timed_out)
        raise Refused(f"the program did not end within the time limit on jax {which.release}: raise --timeout")
    varied = {shape(run.outcome["lines"][at][0]) for side in (bad, good) for run, again in zip(side, side[1:])
              for f in block_outcome.features(run.outcome, again.outcome)
              if f["what"] == "line" for at in [f.get("bad")] if at is not None}
    repeats = 1 if not varied else 2
    if all(_key(run.outcome) == _key(first.outcome) != _key(second.outcome) for run in bad):
        return Problem("exception", first, second, noise=tuple(sorted(varied)))
    if first.outcome["exit"] != second.outcome["exit"]:
        return Problem("exit", first, second, noise=tuple(sorted(varied)))
    values: list[ValueSign | RunSign] = [*_value_signs(bad, good)]
    together = _run_sign(bad, good)
    if together is not None:
        values.append(together)
    noise = tuple(sorted(varied - {k for v in values for k in v.kinds}))
    if not values and noise:  # what differs between the releases varies within one, and the values meet
        sides = [side[0].release for side in (bad, good)
                 if any(block_outcome.features(a.outcome, b.outcome) for a, b in zip(side, side[1:]))]
        raise Refused(f"the lines that differ between jax {first.release} and jax {second.release} also differ "
                      f"between runs of jax {' and of jax '.join(sides)} ({len(bad)} runs a side), and their values "
                      "on the two sides meet, so the kit cannot tell a problem from run-to-run noise: fix the "
                      "program's random seed (or its time-dependent input) and run again")
    if not values:
        raise Refused(f"the program behaves the same on jax {first.release} and jax {second.release}: "
                      "there is no problem to keep")
    return Problem("value", first, second, tuple(values), noise=noise, repeats=repeats)


def _run_sign(bad: Sequence[Seen], good: Sequence[Seen]) -> RunSign | None:
    """The lines printed on every run that one side prints alike and the other does not, where every run of
    the varying side differs from the steady side on one of them at least (`RunSign`); None: no such lines."""
    for steady_side in (1, 0):
        fixed, varying = (good, bad) if steady_side else (bad, good)
        kinds = tuple(k for k in _everywhere(bad, good)
                      if steady([_numbers(r.outcome, k) for r in fixed])
                      and not steady([_numbers(r.outcome, k) for r in varying]))
        if kinds and len(bad) > 1:
            apart_by = min(_run_gap(run.outcome, fixed[0].outcome, kinds) for run in varying)
            if apart_by > 0:
                return RunSign(kinds, (steady_side == 0, steady_side == 1), apart_by)
    return None


def _everywhere(bad: Sequence[Seen], good: Sequence[Seen]) -> list[str]:
    return [kind for kind in _shapes(bad[0].outcome) if all(kind in _shapes(run.outcome) for run in (*bad, *good))]


def _value_signs(bad: Sequence[Seen], good: Sequence[Seen]) -> list[ValueSign]:
    """Each line printed on every run of both sides whose values differ between the sides: steady on both and
    apart, or varying on one side only and never meeting the other's (`kit.reduce.spread`)."""
    values = []
    for kind in _everywhere(bad, good):
        a, b = [_numbers(run.outcome, kind) for run in bad], [_numbers(run.outcome, kind) for run in good]
        sides = (steady(a), steady(b))
        if sides == (False, False) or not (all(sides) or apart(a, b)):
            continue
        apart_by = nearest(a, b)
        if apart_by > 0:
            values.append(ValueSign(kind, apart_by, (_finite(a[0]), _finite(b[0])), sides))
    return values


def op_problem(bad: Seen, good: Seen, lines: tuple[int, int] | None, op: str) -> Problem:
    """Explain's evidence for the op's line on each release, as a `Problem` (`Refused`: nothing to keep)."""
    flagged = [f for f in at_lines(bad.fingerprints, lines) if f.state in HOLDS_WHOLE]
    if not flagged:
        seen = sorted({f"{f.function} {f.op} {f.state.value}" for f in at_lines(bad.fingerprints, lines)})
        raise Refused(f"on jax {bad.release}, nothing of {op} holds a sharded batch whole"
                      + (f" ({', '.join(seen)})" if seen else " (no linalg op or collective compiled there)")
                      + ": there is no problem to keep")
    on_good = {(f.function, f.op): f.state.value for f in at_lines(good.fingerprints, lines)}
    sign_bad = tuple(sorted({(f.function, f.op, f.state.value) for f in flagged}))
    sign_good = tuple(sorted({(fn, o, on_good[(fn, o)]) for fn, o, _ in sign_bad
                              if (fn, o) in on_good and on_good[(fn, o)] not in {s.value for s in HOLDS_WHOLE}}))
    if not sign_good:
        raise Refused(f"jax {good.release} shows it too (or compiles nothing of {op}): "
                      + (", ".join(f"{fn} {o} {s}" for (fn, o), s in sorted(on_good.items())) or "nothing there")
                      + "; there is no difference to keep")
    return Problem("op", bad, good, op=OpSign(sign_bad, sign_good))
