"""Two runs of a report's block, compared: where they differ is the check, and the report's text only says which
side is the bug and confirms it.

The runs' outcomes (kit/triage/block_outcome.py) come back in their records'
``evidence.summary.triage_outcome``. Where they differ (the exception, the exit
code, the lines that print other values: the lines that carry the bug; the
rest is context), bad is "behaves as on the release the bug was seen on" and
good "behaves as on the other". Which release is which comes from the text's
releases: the reporter's is the bad one, unless the text says it worked there
(then the newest is, a regression). What the report quotes (the exception, a
value it got, one it expected) only confirms: it is matched against each side's
run, numbers within a tolerance (the reporter's machine writes other low digits),
in any order where the report shows a set; never as a pattern of the reporter's
literal numbers, and never as the only evidence.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, replace

from ..records import Record, Status
from ..run.failures import RaisedException, replaced_links
from . import block_outcome
from .block_outcome import Feature, Number, BlockOutcome, BlockException
from .report_reading import Reading

QUOTE_RTOL = 1e-3
"""The reporter's numbers against this machine's: another CPU, BLAS or thread count moves the low digits."""


@dataclass(frozen=True)
class Run:
    """One release's run of the block, as the triage saw it."""

    version: str
    status: str
    """The record's verdict or status (``affected``, ``unaffected``, ``inconclusive``, ``crashed``, ...)."""
    reason: str
    outcome: BlockOutcome | None
    """What the block did; None where it could not run to say (not installable, JAX itself cannot run, timed out)."""
    record: Record | None = None
    """The run's record as the runner wrote it (its identity: what ran, where); None for a run stood in for."""
    record_path: str = ""
    log: str = ""
    """Where the record and the run's whole output are, relative to the project."""

    def summary(self, limit: int = 110) -> str:
        """One line: how the run ended and what it printed last."""
        if self.outcome is None:
            return f"{self.status.upper()}: {self.reason}"[:limit + 40]
        raised = self.outcome.get("exception")
        lines = self.outcome["lines"]
        said = block_outcome.exit_words(self.outcome["exit"])
        if block_outcome.is_crash(self.outcome):
            return said
        if raised:
            said += f", {raised['type']}: {raised['text']}"
        elif lines:
            said += f", {len(lines)} line{'s' if len(lines) != 1 else ''} printed, last {block_outcome.filled(lines[-1])!r}"
        else:
            said += ", nothing printed"
        return said if len(said) <= limit else said[:limit - 1] + "…"


def captured(version: str, record: Mapping[str, object], record_path: str = "", log: str = "") -> Run:
    """The run as its record holds it: the outcome the check wrote, unless the run cannot speak for the block."""
    kept = Record.of(record)
    status = str(kept.get("verdict") or kept.get("status"))
    reason = str(kept.get("reason") or "")
    evidence = kept.evidence
    summary = evidence.get("summary")
    text = summary.get("triage_outcome") if isinstance(summary, dict) else None
    usable = kept.get("status") == Status.RAN and not evidence.get("jax_cannot_run") and isinstance(text, str)
    outcome = _outcome(text) if usable and isinstance(text, str) else None
    code = evidence.get("exit_code")
    signal_killed = kept.get("status") == Status.CRASHED and isinstance(code, int) and code < 0
    if signal_killed and isinstance(code, int) and not evidence.get("jax_cannot_run"):
        outcome = block_outcome.crashed(code)  # killed by a signal: a crash is an outcome the block can have
    return Run(version, status, reason, outcome, kept, record_path, log)


def _outcome(text: str) -> BlockOutcome | None:
    """The outcome a record keeps as JSON text: the JSON edge of an outcome the kit reads."""
    try:
        value: object = json.loads(text)
    except ValueError:
        return None
    return block_outcome.outcome_from_json(value)


@dataclass(frozen=True)
class Difference:
    """What tells the bad run from the good one."""

    bad: Run
    good: Run
    features: tuple[Feature, ...]
    noise: frozenset[str] = frozenset()
    """The shapes (numbers masked) of printed lines that differed between two runs of one release: never judged,
    and never matched against the report's quote either."""

    def lines(self) -> list[str]:
        """Each feature with both sides' values, in words: what the check judges."""
        out = []
        bad, good = self.bad.outcome or _NOTHING, self.good.outcome or _NOTHING
        for feature in self.features:
            bad_seen = block_outcome.describe(bad, bad, good, feature)
            good_seen = block_outcome.describe(good, bad, good, feature)
            out.append(f"{feature_name(feature)}: {bad_seen} on {self.bad.version}, {good_seen} on {self.good.version}")
        return out


_NOTHING: BlockOutcome = {"exit": 0, "exception": None, "lines": []}
"""Stands in for a side that has no outcome where the features are said (a `Difference` always has both)."""


def feature_name(feature: Feature) -> str:
    if feature["what"] != "line":
        return str(feature["what"])
    at = feature["bad"] if feature["bad"] is not None else feature["good"]
    return f"printed line {at + 1}" if at is not None else "printed line ?"


def difference(bad: Run, good: Run) -> Difference | None:
    """The features the two runs differ in; None when either could not run, or they behave the same."""
    if bad.outcome is None or good.outcome is None:
        return None
    found = block_outcome.features(bad.outcome, good.outcome)
    return Difference(bad, good, tuple(found)) if found else None


def shows_reported(reading: Reading, outcome: BlockOutcome | None, only: list[int] | None = None) -> bool | None:
    """Does the run show what the report says went wrong? None when the report quotes nothing to match.

    ``only``: the indices of the lines that carry the bug (the others are context); all lines when None or empty.
    """
    if outcome is None:
        return False
    if only:
        outcome = {**outcome, "lines": [line for at, line in enumerate(outcome["lines"]) if at in only]}
    failure = reading.failure
    if failure.crash and failure.exception is None:
        return block_outcome.is_crash(outcome)  # a crash report: the bug is the process killed by a signal
    if failure.exception is not None:
        raised = outcome.get("exception")
        return raised is not None and same_exception(failure.exception.name, failure.exception.headline(), raised)
    if failure.wrong_value is not None:
        return shows_value(outcome, failure.wrong_value.actual)
    return None


def chain_shows_reported(reading: Reading, run: Run) -> bool:
    """Does a link of the run's exception chain show a link of the reported chain? A check's ``bad_if`` is matched
    against each link (docs/checks.md), so the triage's verdict is too: the block's outcome keeps only the exception
    that ended the run, the record (`kit.run.failures.judge`) keeps every link ("During handling of the above
    exception ...", "The above exception was the direct cause ...")."""
    evidence = run.record.get("evidence") if run.record is not None else None
    links = evidence.get("exception_chain") if isinstance(evidence, Mapping) else None
    if not isinstance(links, list):
        return False
    chain = [RaisedException(link["type"], link["message"]) for link in links if isinstance(link, Mapping)
             and isinstance(link.get("type"), str) and isinstance(link.get("message"), str)]
    replaced = replaced_links(chain)  # the release's own error raised from the reported one: not what it ended in
    seen: list[BlockException] = []
    for raised in chain:
        if raised not in replaced:
            first = next((line.strip() for line in raised.message.splitlines() if line.strip()), "")
            seen.append({"type": raised.name, "message": first, "text": first})
    return any(same_exception(reported.name, reported.headline(), raised)
               for reported in reading.failure.chain for raised in seen)


def same_exception(name: str, headline: str, raised: BlockException) -> bool:
    """The reported exception and the run's: the same class and message, numbers compared with a tolerance."""
    if raised["type"] != name:
        return False
    reported = headline.split(":", 1)[1].strip() if ":" in headline else ""
    template, numbers = block_outcome.masked(block_outcome.stable_message(reported))
    seen_template, seen_numbers = block_outcome.masked(block_outcome.stable_message(raised["text"]))
    if not template:
        return True  # the report named the class only
    return seen_template.startswith(template.rstrip("…")) and _numbers_close(numbers, seen_numbers[:len(numbers)])


def shows_value(outcome: BlockOutcome, quoted: str) -> bool:
    """Does the run print the quoted value? Line by line where the quote's lines have the run's lines' shape
    (the same words, numbers masked), else as a run of numbers anywhere; numbers within `QUOTE_RTOL` or to the
    digits the report writes, in any order where the report writes a set (``{...}``)."""
    return value_distance(outcome, quoted) is not None


def value_distance(outcome: BlockOutcome, quoted: str) -> float | None:
    """How far the run's printed numbers are from the quoted ones at best (the largest relative difference of a
    match), or None where the run does not show the quoted value (`shows_value`)."""
    printed = list(outcome["lines"])
    quoted_lines = [block_outcome.masked(" ".join(line.split())) for line in quoted.splitlines() if line.strip()]
    as_set = quoted.strip().startswith("{")
    # Each quoted line against the printed lines of its shape: the nearest of them (a loop prints one shape
    # many times; the quote shows one of those lines, not all), and every quoted line that has a shape there.
    shaped = [[line[1] for line in printed if " ".join(line[0].split()) == template] + [numbers]
              for template, numbers in quoted_lines]
    shaped = [candidates for candidates in shaped if len(candidates) > 1]
    if shaped:
        best = [_nearest(_ordered(candidates[-1], as_set), [_ordered(s, as_set) for s in candidates[:-1]])
                for candidates in shaped]
        return None if any(gap is None for gap in best) else max(gap for gap in best if gap is not None)
    template, numbers = block_outcome.masked(" ".join(quoted.split()))
    if not numbers:
        words = " ".join(template.split())
        return 0.0 if any(words in " ".join(line[0].split()) for line in printed) else None
    flat = [number for line in printed for number in line[1]]
    gaps = [_gap(_ordered(numbers, as_set), _ordered(flat[start:start + len(numbers)], as_set))
            for start in range(len(flat) - len(numbers) + 1)]
    found = [gap for gap in gaps if gap is not None]
    return min(found) if found else None


def _nearest(quoted: list[Number], seen: list[list[Number]]) -> float | None:
    """The smallest gap between ``quoted`` and any of ``seen`` (None where none is within tolerance)."""
    gaps = [gap for gap in (_gap(quoted, numbers) for numbers in seen) if gap is not None]
    return min(gaps) if gaps else None


def _ordered(numbers: list[Number], as_set: bool) -> list[Number]:
    return sorted(numbers, key=_key) if as_set else numbers


def _key(value: Number) -> float:
    return float("inf") if isinstance(value, str) else float(value)


def _gap(quoted: list[Number], seen: list[Number]) -> float | None:
    """The largest relative difference between the quoted numbers and the seen ones; None when one is out of
    tolerance (or they are not as many)."""
    if len(quoted) != len(seen):
        return None
    gap = 0.0
    for q, s in zip(quoted, seen):
        if isinstance(q, str) or isinstance(s, str):
            if q != s:
                return None
        elif not math.isclose(q, s, rel_tol=QUOTE_RTOL, abs_tol=_written_precision(q)):
            return None
        else:
            gap = max(gap, abs(q - s) / max(abs(q), abs(s), 1e-30))
    return gap


def _numbers_close(quoted: list[Number], seen: list[Number]) -> bool:
    return _gap(quoted, seen) is not None


def _written_precision(value: float) -> float:
    """Half a unit of the last digit ``%g`` would write for a quoted value: 0.5 is 0.5 ± 0.05."""
    digits = re.sub(r"e.*$", "", "%.7g" % value)
    places = len(digits.split(".")[1]) if "." in digits else 0
    return 0.5 * 10.0 ** -places if places else 1e-12


def confirmation(reading: Reading, bad: Run, good: Run, features: tuple[Feature, ...] = (),
                 noise: frozenset[str] = frozenset()) -> str:
    """What the report's quoted failure says of the two runs, in one sentence (it confirms; it does not decide).

    One rule for both runs, the one the sentence names: the quote against each run's whole printed output,
    every quoted line against the nearest line of its shape. (Each run was once cut to its own differing lines:
    two lines of one shape, a context line kept on one side and not the other, and a quote that matched the
    reporter's release read as "NOT confirmed ... labels swapped?".) ``features`` is kept for the callers.
    Quoted lines of a ``noise`` shape (printed random floats, which no other run repeats) are left out of the
    quote first, for both runs alike.
    """
    reading, left_out = _quote_without(reading, noise)
    if left_out and reading.failure.wrong_value is not None and not reading.failure.wrong_value.actual.strip():
        return (f"unconfirmed: every line the report quotes varies between two runs of one release ({left_out} "
                "left out): nothing in it to confirm by")
    said = _confirmed(reading, bad, good)
    varies = "line that varies" if left_out == 1 else "lines that vary"
    return said + (f" ({left_out} quoted {varies} between runs of one release left out)" if left_out else "")


def _quote_without(reading: Reading, noise: frozenset[str]) -> tuple[Reading, int]:
    """``reading`` with the quoted lines whose shape is among ``noise`` taken out, and how many were."""
    wrong = reading.failure.wrong_value
    if not noise or wrong is None:
        return reading, 0
    kept = [line for line in wrong.actual.splitlines()
            if not line.strip() or " ".join(block_outcome.masked(line.rstrip())[0].split()) not in noise]
    left_out = sum(1 for line in wrong.actual.splitlines() if line.strip()) - sum(1 for line in kept if line.strip())
    if not left_out:
        return reading, 0
    failure = replace(reading.failure, wrong_value=replace(wrong, actual="\n".join(kept)))
    return replace(reading, failure=failure), left_out


def _confirmed(reading: Reading, bad: Run, good: Run) -> str:
    on_bad = shows_reported(reading, bad.outcome)
    on_good = shows_reported(reading, good.outcome)
    failure = reading.failure
    what = (failure.exception.headline(100) if failure.exception is not None else
            f"quoted output {failure.wrong_value.actual[:60]!r}" if failure.wrong_value is not None else
            f"crash ({failure.crash[:60]!r})" if failure.crash else "")
    if on_bad is None:
        return "the report quotes no failure to match: the bug is taken as the reporter's release's behaviour"
    if on_bad and on_good and reading.failure.wrong_value is not None:
        # Both within the tolerance for another machine's digits: the side ten times closer is the one quoted.
        near_bad, near_good = (value_distance(run.outcome or _NOTHING, reading.failure.wrong_value.actual)
                               for run in (bad, good))
        if near_bad is not None and near_good is not None and near_bad * 10 < near_good:
            on_good = False
        elif near_bad is not None and near_good is not None and near_good * 10 < near_bad:
            on_bad = False
    if on_bad and not on_good:
        return f"confirmed: the report's {what} matches the run on {bad.version}, not the one on {good.version}"
    if on_good and not on_bad:
        return (f"NOT confirmed: the report's {what} matches the run on {good.version}, not on {bad.version} "
                "(are its labels swapped?)")
    return f"unconfirmed: the report's {what} matches {'both runs' if on_bad else 'neither run'}"
