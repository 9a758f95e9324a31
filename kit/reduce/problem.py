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

import math
import re
from dataclasses import dataclass

from ..hlo import HOLDS_WHOLE, Fingerprint
import kit.triage.block_outcome as block_outcome  # the foundation's reader of outcomes (tests/test_layers.py)
from .runs import Seen

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


def gap(first: list[block_outcome.Number], second: list[block_outcome.Number]) -> float:
    """The largest relative difference between two printed sequences (inf: not as many, or finite against not)."""
    if len(first) != len(second):
        return math.inf
    worst = 0.0
    for a, b in zip(first, second):
        if isinstance(a, str) or isinstance(b, str):
            if a != b:
                return math.inf
        elif not block_outcome.same_number(a, b):
            worst = max(worst, abs(a - b) / max(abs(a), abs(b), 1e-30))
    return worst


def _finite(numbers: list[block_outcome.Number]) -> bool:
    return not any(isinstance(n, str) for n in numbers)


@dataclass(frozen=True)
class ValueSign:
    kind: str
    """The line's shape (`shape`)."""
    gap: float
    finite: tuple[bool, bool]
    """Whether the bad side's numbers, and the good side's, were all finite."""

    def kept(self, bad: block_outcome.BlockOutcome, good: block_outcome.BlockOutcome) -> bool:
        first, second = _numbers(bad, self.kind), _numbers(good, self.kind)
        if not first or not second:
            return False
        seen = gap(first, second)
        return (seen > 0 and seen >= min(self.gap / 10, FLOOR) and (_finite(first), _finite(second)) == self.finite)


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
    values: tuple[ValueSign, ...] = ()
    op: OpSign | None = None
    noise: tuple[str, ...] = ()

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
        return self.kind == "exception" or any(_numbers(bad.outcome, v.kind) for v in self.values)

    def holds(self, bad: Seen, good: Seen, lines: tuple[int, int] | None) -> bool:
        """The bad release still shows the problem AND the good one still does not."""
        if not self.shown_on_bad(bad, lines) or good.timed_out:
            return False
        if self.kind == "op":
            assert self.op is not None
            return self.op.spared(good.fingerprints, lines, self.op.shown(bad.fingerprints, lines))
        if _key(good.outcome) != _key(self.good.outcome):
            return False
        if self.kind == "exception":
            return True
        if self.kind == "exit":
            return good.outcome["exit"] == self.good.outcome["exit"]
        return any(v.kept(bad.outcome, good.outcome) for v in self.values)

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
        kinds = [f"`{v.kind}`" for v in self.values if runs is None or v.kept(bad.outcome, good.outcome)]
        return (f"printed values differ between jax {bad.release} and jax {good.release} in "
                + (listed(kinds) if kinds else "none of the lines the original's runs differed in"))


def op_named(function: str, op: str) -> str:
    """The function and the op it compiles to, once where they share a name (``eigh``, not ``eigh eigh``)."""
    return op if function == op else f"{function} {op}"


SHOWN = 3
"""Lines named in a sentence before the rest are counted."""


def listed(items: list[str]) -> str:
    """The first few of ``items``, and how many more where it is cut (a list is never cut unsaid)."""
    more = len(items) - SHOWN
    return "; ".join(items[:SHOWN]) + (f" and {more} more" if more > 0 else "")


def _key(outcome: block_outcome.BlockOutcome) -> tuple[str, str] | None:
    raised = outcome.get("exception")
    return None if raised is None else (raised["type"], raised["message"])


def _raised(seen: Seen) -> str:
    raised = seen.outcome.get("exception")
    return "no exception" if raised is None else f"{raised['type']}: {raised['text'][:200]}"


def found_problem(bad: tuple[Seen, Seen], good: tuple[Seen, Seen]) -> Problem:
    """The difference between the releases' runs (each run twice), as a `Problem`; `Refused` where there is none
    to keep (a program that fails the same way on both), or none the kit can tell from noise (what differs
    between the releases also varies between runs of one)."""
    first, second = bad[0], good[0]
    if first.timed_out or second.timed_out:
        which = first if first.timed_out else second
        raise Refused(f"the program did not end within the time limit on jax {which.release}: raise --timeout")
    noise = {shape(run.outcome["lines"][at][0]) for run, again in (bad, good)
             for f in block_outcome.features(run.outcome, again.outcome)
             if f["what"] == "line" for at in [f.get("bad")] if at is not None}
    if _key(first.outcome) != _key(second.outcome) and _key(bad[1].outcome) == _key(first.outcome):
        return Problem("exception", first, second, noise=tuple(sorted(noise)))
    if first.outcome["exit"] != second.outcome["exit"]:
        return Problem("exit", first, second, noise=tuple(sorted(noise)))
    values = []
    for kind in _shapes(first.outcome):
        if kind in noise or kind not in _shapes(second.outcome):
            continue
        a, b = _numbers(first.outcome, kind), _numbers(second.outcome, kind)
        apart = gap(a, b)
        if apart > 0:
            values.append(ValueSign(kind, apart, (_finite(a), _finite(b))))
    if not values and noise:  # sameness not measured: what differs between the releases varies within one
        varied = [run.release for run, again in (bad, good) if block_outcome.features(run.outcome, again.outcome)]
        raise Refused(f"the lines that differ between jax {first.release} and jax {second.release} also differ "
                      f"between two runs of jax {' and of jax '.join(varied)}, so the kit cannot tell a problem "
                      "from run-to-run noise: fix the program's random seed (or its time-dependent input) and "
                      "run again")
    if not values:
        raise Refused(f"the program behaves the same on jax {first.release} and jax {second.release}: "
                      "there is no problem to keep")
    return Problem("value", first, second, tuple(values), noise=tuple(sorted(noise)))


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
