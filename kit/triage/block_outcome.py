"""What a report's block did when it ran, as an outcome two runs can be told apart by; and which of two outcomes a
third run behaves as.

An outcome is the exit code, the exception (its type, and its message's first
line with every number masked), and each line printed, as a template (numbers
masked as ``#``, release numbers as ``<version>``, addresses as ``0x…``) with
its numbers parsed. Two runs *differ* in a feature: the exception, the exit
code, or a line (aligned by template; a line whose numbers differ beyond
`RTOL`/`ATOL`, or that one run prints and the other does not). A third run is
judged on those features only, the other lines being context: it behaves as
one side when every feature matches that side and none the other.

Standard library only, in Python 3.9's syntax: the triage check carries this
module's text inside it (kit/triage/check_writer.py) and runs in every JAX
release's environment; the kit judges captured runs with the same functions.
"""

import contextlib
import difflib
import io
import json
import math
import os
import re
import signal
import sys
import sysconfig
import traceback
from typing import List, NamedTuple, Optional, Tuple, TypedDict, Union

RTOL, ATOL = 2e-6, 1e-9
"""Two printed numbers are the same value within these: a few float32 ulps of rounding (another summation order)
are no difference, a wrong digit that float32 prints is."""

MAX_LINES, MAX_CHARS, MAX_NUMBERS = 100, 300, 64
"""What an outcome keeps of the output: the last lines, each cut; enough to judge, small enough for a record."""

_VERSION = re.compile(r"(?<![\w.])v?\d+\.\d+\.\d+(?:\.\d+)*(?:\.dev\d+|rc\d+|\+[\w.]+)?(?![\w.])")
_ADDRESS = re.compile(r"\b0x[0-9a-fA-F]+\b")
_NUMBER = re.compile(r"(?<![\w.])[-+]?(?:(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?|nan|inf)(?![\w])")
_TIMING = re.compile(r"(?i)\b(?:time|took|elapsed|seconds?|secs?|ms|us|µs|per second|it/s)\b")
"""A line that reports a time differs from run to run: context, never a feature (where its time is not found)."""
_TIMED = re.compile(r"(?i)(?<![\w.])[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:e[-+]?\d+)?\s?(?:ms|us|µs|ns|s|secs?|seconds?|it/s)(?![\w/])"
                    r"|(?<=time)(?:\s*[:=]\s*|\s+)(?:\d+\.\d*|\.\d+|\d+)(?:e[-+]?\d+)?(?![\w.])"
                    r"|(?<=took|psed)\s+(?:\d+\.\d*|\.\d+|\d+)(?:e[-+]?\d+)?(?![\w.])")
TIME = "<time>"
"""A time a line printed (``12.3 ms``, ``time: 0.52``): masked as this, so the rest of the line is still compared
(a line printing a value and its time kept the value out of every judgement)."""

Number = Union[float, str]
"""A printed number: a finite float, or ``"nan"``/``"inf"``/``"-inf"`` as the line wrote it."""


class PrintedLine(NamedTuple):
    """A printed line: its template (numbers masked), its numbers, and the line as it was printed (cut to
    `MAX_CHARS`). Written to JSON as ``[template, numbers, text]``; an outcome written before the text was kept
    reads back with ``text`` empty."""

    template: str
    numbers: List[Number]
    text: str = ""


class BlockException(TypedDict):
    """The block's exception: its class, its first line with numbers masked, and that line as printed."""

    type: str
    message: str
    text: str


class BlockOutcome(TypedDict):
    """What one run of the block did (the JSON a record keeps in ``evidence.summary.triage_outcome``)."""

    exit: int
    exception: Optional[BlockException]
    lines: List[PrintedLine]


class Feature(TypedDict, total=False):
    """One thing two runs differ in: ``{"what": "exception"}``, ``{"what": "exit"}`` or a printed line,
    ``{"what": "line", "bad": i, "good": j}`` (either index None where that run has no such line)."""

    what: str
    bad: Optional[int]
    good: Optional[int]


def outcome_from_json(value: object) -> Optional[BlockOutcome]:
    """An outcome as JSON gave it back (a record's, a check's references), checked; None where it is not one."""
    if not isinstance(value, dict) or not isinstance(value.get("exit"), int) or not isinstance(value.get("lines"), list):
        return None
    lines = [_line_from_json(line) for line in value["lines"]]
    raised = value.get("exception")
    exception = _raised_from_json(raised)
    if any(line is None for line in lines) or (raised is not None and exception is None):
        return None
    return {"exit": value["exit"], "exception": exception, "lines": [line for line in lines if line is not None]}


def _line_from_json(value: object) -> Optional[PrintedLine]:
    if not isinstance(value, (list, tuple)) or len(value) not in (2, 3):
        return None
    template, numbers, text = (*value, "") if len(value) == 2 else value
    if not isinstance(template, str) or not isinstance(numbers, list) or not isinstance(text, str):
        return None
    if not all(isinstance(n, (int, float, str)) and not isinstance(n, bool) for n in numbers):
        return None
    return PrintedLine(template, [n if isinstance(n, str) else float(n) for n in numbers], text[:MAX_CHARS])


def _raised_from_json(value: object) -> Optional[BlockException]:
    if not isinstance(value, dict):
        return None
    kind, message, text = value.get("type"), value.get("message"), value.get("text")
    if not isinstance(kind, str) or not isinstance(message, str) or not isinstance(text, str):
        return None
    return {"type": kind, "message": message, "text": text}


def features_from_json(value: object) -> List[Feature]:
    """The judged features as JSON gave them back (a check's references); those that are not one are left out."""
    found: List[Feature] = []
    for item in value if isinstance(value, list) else []:
        if isinstance(item, dict) and item.get("what") in ("exception", "exit"):
            found.append({"what": item["what"]})
        elif isinstance(item, dict) and item.get("what") == "line":
            bad, good = item.get("bad"), item.get("good")
            if (bad is None or isinstance(bad, int)) and (good is None or isinstance(good, int)):
                found.append({"what": "line", "bad": bad, "good": good})
    return found


_REPR_START = re.compile(r"\b(?:\w*Trac(?:er|ed)\w*|\w*(?:Shaped|Concrete)Array)\s*[<(]")
"""Where an object's repr begins that JAX writes differently from release to release: a tracer
(``Traced<ShapedArray(int32[], weak_type=True)>with<DynamicJaxprTrace>``, ``Traced<~int32[]>with<...>``,
``JitTracer<~int32[]>``, ``JitTracer(~int32[])``: four forms of one tracer from 0.4.36 to 0.10.0) or an aval."""
_OBJECT_AT = re.compile(r"<[^<>\n]*\bat 0x[0-9a-fA-F]+>")
_AVAL = re.compile(r"(?<![\w~])~?[a-z]+(?:\d+|#)?\[[\d#, ]*\](?:\{[^}\n]*\})?")
_PAIRS = {"<": ">", "(": ")", "[": "]", "{": "}"}
_QUALIFIED = re.compile(r"'(?:[A-Za-z_]\w*\.)+([A-Z]\w*)'")
"""A quoted dotted class name: CPython >= 3.12 writes a C extension's type with its module
(``'jaxlib._jax.pytree.GetAttrKey'`` where 3.11 wrote ``'GetAttrKey'``), so the stable form keeps its last
component. Only a CapWords one, a class's: ``'model.py'`` and ``'data.py'`` stay apart."""
REPR = "<repr>"
"""What a varying object repr reads as in a message's stable form."""


def repr_spans(text: str) -> List[Tuple[int, int]]:
    """The spans of ``text`` holding object reprs that vary between releases (`_REPR_START`, ``<... at 0x...>``),
    each with its balanced brackets and a trailing ``with<...>``."""
    spans: List[Tuple[int, int]] = []
    at = 0
    while True:
        found = _REPR_START.search(text, at)
        if found is None:
            break
        end = _closing(text, found.end() - 1)
        while end is not None and text.startswith("with<", end):
            end = _closing(text, end + len("with"))
        if end is None:
            break  # unbalanced (a message cut short): left as it is
        spans.append((found.start(), end))
        at = end
    spans += [(m.start(), m.end()) for m in _OBJECT_AT.finditer(text)
              if not any(a <= m.start() < b for a, b in spans)]
    return sorted(spans)


def _closing(text: str, opening: int) -> Optional[int]:
    """The index after the bracket that closes the one at ``opening``; None where it is never closed."""
    stack = []
    for at in range(opening, len(text)):
        char = text[at]
        if char in _PAIRS:
            stack.append(_PAIRS[char])
        elif stack and char == stack[-1]:
            stack.pop()
            if not stack:
                return at + 1
    return None


def stable_message(text: str) -> str:
    """An exception message with what varies between releases for the same failure made one word: object reprs
    (tracers, avals, ``<... at 0x...>``) read `REPR`, bare avals (``~int32[]``, ``f32[3,4]``) ``<aval>``, a quoted
    dotted name its last component (`_QUALIFIED`). The words around them, the exception's own, stay."""
    out, at = [], 0
    for start, end in repr_spans(text):
        out += [text[at:start], REPR]
        at = end
    return _QUALIFIED.sub(r"'\1'", _AVAL.sub("<aval>", "".join(out) + text[at:]))


def masked(text: str) -> Tuple[str, List[Number]]:
    """``text`` as a template with its numbers as ``#``, and the numbers (floats; ``"nan"``/``"inf"`` as text)."""
    text = _ADDRESS.sub("0x…", _VERSION.sub("<version>", text[:MAX_CHARS]))
    text = _TIMED.sub(_time_masked, text)
    numbers: List[Number] = []

    def take(found: "re.Match[str]") -> str:
        value = float(found.group(0))
        numbers.append(value if math.isfinite(value) else found.group(0).lstrip("+"))
        return "#"

    return _NUMBER.sub(take, text), numbers[:MAX_NUMBERS]


def _time_masked(found: "re.Match[str]") -> str:
    """A time as `TIME`, what led to it (``time: ``) kept."""
    said = found.group(0)
    return said[:len(said) - len(said.lstrip(" \t:="))] + TIME


def crashed(exit_code: int) -> BlockOutcome:
    """The outcome of a run killed by a signal (``exit_code`` is minus its number, as subprocess gives it): no
    exception, and no printed lines (the block's output was never handed back, so none is judged)."""
    return {"exit": exit_code, "exception": None, "lines": []}


def is_crash(run: BlockOutcome) -> bool:
    """Was the run killed by a signal (a segfault, an abort)?"""
    return run["exit"] < 0


def exit_words(code: int) -> str:
    """``exit 1``, or ``killed by signal 11 (SIGSEGV)`` for a run a signal ended."""
    if code >= 0:
        return "exit %d" % code
    try:
        name = " (%s)" % signal.Signals(-code).name
    except ValueError:
        name = ""
    return "killed by signal %d%s" % (-code, name)


def outcome(exit_code: int, printed: str, error: Optional[BaseException] = None) -> BlockOutcome:
    """The outcome of one run: its exit code, its exception (or None), the lines it printed (see the docstring)."""
    lines = [PrintedLine(*masked(line.rstrip()), line.rstrip()[:MAX_CHARS])
             for line in printed.splitlines() if line.strip()][-MAX_LINES:]
    raised: Optional[BlockException] = None
    if error is not None:
        first = next((line.strip() for line in str(error).splitlines() if line.strip()), "")
        raised = {"type": type(error).__name__, "message": masked(stable_message(first))[0], "text": first[:MAX_CHARS]}
    return {"exit": exit_code, "exception": raised, "lines": lines}


class _Tee(io.StringIO):
    def write(self, text: str) -> int:
        if sys.__stdout__ is not None:
            sys.__stdout__.write(text)
        return super().write(text)


def run_block(code: str, name: str) -> BlockOutcome:
    """Run the block as ``__main__``, its output shown and kept; its traceback printed as Python would."""
    kept, code_seen, error = _Tee(), 0, None
    with contextlib.redirect_stdout(kept):
        try:
            exec(compile(code, name, "exec"), {"__name__": "__main__", "__file__": os.path.abspath(sys.argv[0])})
        except SystemExit as stop:
            code_seen = stop.code if isinstance(stop.code, int) else (0 if stop.code is None else 1)
        except KeyboardInterrupt:
            raise
        except BaseException as raised:  # the block's own failure is what is observed
            sys.stderr.write(shown_traceback(raised))
            code_seen, error = 1, raised
    sys.stdout.flush()
    return outcome(code_seen, kept.getvalue(), error)


def shown_traceback(raised: BaseException) -> str:
    """The traceback as Python prints it, with this machine's folders named by what they are (``<site-packages>``,
    ``<env>``, ``<python>``, ``<checks>``): a bisect report quotes it, and it is pasted into a bug thread."""
    text = "".join(traceback.format_exception(type(raised), raised, raised.__traceback__))
    folders = [(sysconfig.get_paths().get("purelib", ""), "<site-packages>"), (sys.prefix, "<env>"),
               (sys.base_prefix, "<python>"), (os.path.dirname(os.path.abspath(__file__)), "<checks>")]
    for folder, name in folders:
        if len(folder) > 1:
            text = text.replace(folder + os.sep, name + os.sep)
    return text


def timing_only(line: PrintedLine) -> bool:
    """A line that reports a time where the time itself was not found (``elapsed: fast``): context as a whole."""
    return bool(_TIMING.search(line[0])) and TIME not in line[0]


def same_number(a: Number, b: Number) -> bool:
    if isinstance(a, str) or isinstance(b, str):
        return a == b
    return abs(a - b) <= ATOL + RTOL * max(abs(a), abs(b))


def same_line(a: Optional[PrintedLine], b: Optional[PrintedLine]) -> bool:
    if a is None or b is None:
        return a is b
    return a[0] == b[0] and len(a[1]) == len(b[1]) and all(same_number(x, y) for x, y in zip(a[1], b[1]))


def _exception_key(run: BlockOutcome) -> Optional[Tuple[str, str]]:
    """The exception by its type and the stable part of its message (`stable_message`: a tracer's repr, which
    JAX writes four ways from 0.4.36 to 0.10.0, never tells two runs apart; a commit printing another form was
    "neither" side, and a bisect skipped 13 of 16 probes on it)."""
    raised = run.get("exception")
    return None if raised is None else (raised["type"], stable_message(raised["message"]))


def _pairs(first: List[PrintedLine], second: List[PrintedLine]) -> List[Tuple[Optional[int], Optional[int]]]:
    """The two runs' lines aligned by template: pairs of indices, None where one run has no such line."""
    matcher = difflib.SequenceMatcher(None, [line[0] for line in first], [line[0] for line in second], autojunk=False)
    pairs: List[Tuple[Optional[int], Optional[int]]] = []
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        common = min(i2 - i1, j2 - j1) if tag in ("equal", "replace") else 0
        pairs += [(i1 + k, j1 + k) for k in range(common)]
        pairs += [(i, None) for i in range(i1 + common, i2)] + [(None, j) for j in range(j1 + common, j2)]
    return pairs


def features(bad: BlockOutcome, good: BlockOutcome) -> List[Feature]:
    """Where the two runs differ: the exception, the exit code, each line that differs (timings are context)."""
    found: List[Feature] = []
    if _exception_key(bad) != _exception_key(good):
        found.append({"what": "exception"})
    if bad["exit"] != good["exit"]:
        found.append({"what": "exit"})
    for i, j in _pairs(bad["lines"], good["lines"]):
        b = bad["lines"][i] if i is not None else None
        g = good["lines"][j] if j is not None else None
        if not same_line(b, g) and not any(timing_only(line) for line in (b, g) if line is not None):
            found.append({"what": "line", "bad": i, "good": j})
    if found and found[0]["what"] == "exception":
        # What one side never printed because it raised is a consequence of the exception, not a feature of its own.
        found = [f for f in found if f["what"] != "line" or (f["bad"] is not None and f["good"] is not None)]
    if is_crash(bad) or is_crash(good):
        # A crashed run's printed lines never came back: the crash (its exit) is the feature, its lines are unknown.
        found = [f for f in found if f["what"] != "line"]
    return found


def _counterpart(run: BlockOutcome, side: BlockOutcome, index: Optional[int]) -> Optional[PrintedLine]:
    if index is None:
        return None
    for mine, theirs in _pairs(run["lines"], side["lines"]):
        if theirs == index:
            return run["lines"][mine] if mine is not None else None
    return None


def _decide(run: BlockOutcome, bad: BlockOutcome, good: BlockOutcome, feature: Feature) -> str:
    """``bad``, ``good`` or ``neither``: which side the run matches on this one feature."""
    if feature["what"] == "exception":
        return _side(_exception_key(run), _exception_key(bad), _exception_key(good))
    if feature["what"] == "exit":
        return _side(run["exit"], bad["exit"], good["exit"])
    i, j = feature["bad"], feature["good"]
    as_bad, as_good = _counterpart(run, bad, i), _counterpart(run, good, j)
    is_bad = same_line(as_bad, bad["lines"][i]) if i is not None else as_good is None
    is_good = same_line(as_good, good["lines"][j]) if j is not None else as_bad is None
    return "bad" if is_bad and not is_good else "good" if is_good and not is_bad else "neither"


def _side(seen: object, b: object, g: object) -> str:
    """``bad`` where the run's value is the bad run's and not the good's, ``good`` the other way, else ``neither``."""
    return "bad" if seen == b and seen != g else "good" if seen == g and seen != b else "neither"


def side_of(run: BlockOutcome, bad: BlockOutcome, good: BlockOutcome, judged: List[Feature]) -> Tuple[str, str]:
    """Which side the run behaves as (``bad``, ``good``, ``neither``) on the judged features, and why in words."""
    decided = [(_decide(run, bad, good, feature), feature) for feature in judged]
    sides = {side for side, _ in decided}
    if len(sides) == 1 and sides != {"neither"}:
        return decided[0][0], "; ".join(describe(run, bad, good, feature) for _, feature in decided)
    return "neither", "; ".join(f"{describe(run, bad, good, feature)} ({side})" for side, feature in decided)


def describe(run: BlockOutcome, bad: BlockOutcome, good: BlockOutcome, feature: Feature) -> str:
    """What the run shows for one feature, in a few words."""
    if feature["what"] == "exception":
        raised = run.get("exception")
        if raised is None:
            return "no exception (%s)" % exit_words(run["exit"]) if is_crash(run) else "no exception"
        return f"{raised['type']}: {raised['text'][:120]}"
    if feature["what"] == "exit":
        return exit_words(run["exit"])
    line = _counterpart(run, bad, feature["bad"]) or _counterpart(run, good, feature["good"])
    return "no such line" if line is None else f"prints {filled(line)!r}"


def filled(line: PrintedLine) -> str:
    """The line as it was printed; for an outcome kept before the text was (a cached probe's), its template with
    its numbers put back (a whole number without its point, others as Python writes them)."""
    if line.text:  # quoted as printed: ``2.`` stays ``2.``, aligned columns keep their spaces
        return line.text
    numbers = iter(line[1])
    return re.sub("#", lambda _m: _number_text(next(numbers, "#")), line[0])


def _number_text(value: Number) -> str:
    if isinstance(value, str):
        return value
    return "%d" % value if value.is_integer() and abs(value) < 1e16 else repr(value)


def main(block: str, name: str, bad_json: object, good_json: object, judged_json: object,
         releases: Tuple[str, str], line: str) -> None:
    """The check: run the block, keep its outcome in KIT_RESULT; judged against ``bad``/``good`` when given (as
    the check's text holds them: JSON values, checked here)."""
    bad, good, judged = outcome_from_json(bad_json), outcome_from_json(good_json), features_from_json(judged_json)
    seen = run_block(block, name)
    if os.environ.get("KIT_RESULT"):
        with open(os.environ["KIT_RESULT"], "w", encoding="utf-8") as result:
            json.dump({"summary": {"triage_outcome": json.dumps(seen)}}, result)
    if bad is None or good is None:
        sys.exit(seen["exit"])  # a capture: the block's own exit, classed by the kit as any script's
    code, said = judgement(seen, bad, good, judged, releases, line)
    print(said)
    sys.exit(code)


def judgement(seen: BlockOutcome, bad: BlockOutcome, good: BlockOutcome, judged: List[Feature], releases: Tuple[str, str],
              line: str) -> Tuple[int, str]:
    """The check's verdict on one run's outcome: (exit code, the line it prints). 1 with ``line`` first as on the
    bad release, 0 as on the good one, 125 otherwise. The kit judges triage's captured runs with this function
    too (kit/triage/judged_runs.py): the same code the check carries."""
    side, why = side_of(seen, bad, good, judged)
    if side == "bad":
        return 1, f"{line} behaves as on jax {releases[0]}: {why}"
    if side == "good":
        return 0, f"behaves as on jax {releases[1]}: {why}"
    return 125, f"behaves neither as on jax {releases[0]} nor as on jax {releases[1]}: {why}"
