"""The failure a report describes: the exception its traceback ends with, or a wrong value it quotes.

An exception is read from the last traceback the report holds (a fenced block,
else the prose), with its whole chain (`kit.run.failures.exception_chain`,
the same reading the kit applies to a script's output). A wrong value is a
statement the reporter wrote: "Expected: ... / Got: ...", "expected X but got
Y", each value on its line or in the block that follows. What the report does
not say is not made up: no failure found is an answer too.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..run.failures import RaisedException, exception_chain
from .crash_words import crash_said
from .issue_text import TRACEBACK_HEADER, Block, prose_lines

# "Expected:", "Expected output", "I expected", "should be", "should print"; then "Got:", "Actual", "instead",
# "but got", "now it prints": each label, then its value on the same line or in the block right after it.
_EXPECTED = re.compile(r"(?im)^.*?\b(?:expected(?: output| result| value)?|should (?:be|print|return|give))\b"
                       r"\s*(?:is|was)?\s*:?[ \t]*(?P<value>[^\n]*)$")
_ACTUAL = re.compile(r"(?im)^.*?\b(?:got|actual(?: output| result| value)?|instead|(?:it |now it |now )?"
                     r"(?:prints|returns|gives)(?:\s+(?:here|now|instead|for me|this))?(?=\s*(?::|`|$))|observed(?: output)?)\b\s*(?:is|was)?\s*:?[ \t]*"
                     r"(?P<value>[^\n]*)$")
"""A verb (prints, returns, gives) labels a value only where one follows it (a colon, a backtick, the block on the
next line): "as NumPy gives. With ..." names no value."""
_OUTPUT = re.compile(r"(?im)^\s*(?:the\s+|its\s+)?output\s*(?:is|was)?\s*:[ \t]*(?P<value>[^\n]*)$")
"""A bare "Output:" opening a line, when no other label says what was got."""
_ONE_LINE = re.compile(r"(?i)\b(?:should (?:be|print|return|give)|expected)\s*:?\s*(?P<expected>`[^`\n]+`|[^\s,;]+)"
                       r"[\s,;]*(?:but\s+)?(?:instead|(?:it\s+)?(?:got|gives|returns|prints)|we get|i get)\s*:?\s*"
                       r"(?P<actual>`[^`\n]+`|[^\s,;:`][^\s,;]*)")
"""Both values in one sentence ("should be `1`, but got `0`"): it beats a label read elsewhere in the prose."""
_PARENTHESIS = re.compile(r"^\([^)\n]*\)\s*:?\s*")
"""What a label says about itself ("Expected output (same as NumPy):"): not the value."""
_INLINE = re.compile(r"`([^`\n]+)`")
_VALUE = re.compile(r"^(?:[-+]?\d|[-+]?\.\d|\[|\(|Array\(|array\(|True\b|False\b|nan\b|inf\b)")
"""A value written without backticks starts as one: a number, a list or tuple, an array's repr."""


@dataclass(frozen=True)
class WrongValue:
    """A value the reporter expected and the one they got, as the text writes them."""

    expected: str
    actual: str

    def sentence(self) -> str:
        expected = f"expected {self.expected!r}" if self.expected else "no expected value quoted"
        return f"a wrong value: got {self.actual!r}, {expected}"


@dataclass(frozen=True)
class ReportedFailure:
    """What the report says went wrong: an exception chain (the one that ended the run last), or a wrong value."""

    chain: tuple[RaisedException, ...] = ()
    wrong_value: WrongValue | None = None
    source: str = ""
    """Where in the report it was read: "block 3", "the prose"."""
    crash: str = ""
    """The report's line that says the process crashed (a segfault, an abort: kit/triage/crash_words.py), or ""."""

    @property
    def exception(self) -> RaisedException | None:
        return self.chain[-1] if self.chain else None

    def sentence(self) -> str:
        if self.exception is not None:
            # "raised from" only for ``raise ... from`` (__cause__); an exception raised while another was being
            # handled (__context__, "During handling of the above exception") is said as that
            causes = [f"{'raised from' if link.led_to == 'cause' else 'while handling'} {link.headline(80)}"
                      for link in self.chain[:-1]]
            cause = f" ({'; '.join(causes)})" if causes else ""
            return f"{self.exception.headline()}{cause}, from {self.source}"
        if self.wrong_value is not None:
            return f"{self.wrong_value.sentence()}, from {self.source}"
        if self.crash:
            return f"a crash: {self.crash!r}, from {self.source}"
        return "no failure found"


def reported_failure(text: str, blocks: list[Block]) -> ReportedFailure:
    """The exception of the report's last traceback; else a crash the text names; else the wrong value it states;
    else nothing. A crash is kept beside an exception too: the bisect then counts a crash as the bug as well.

    A crash comes before a wrong value: a crash report's prose says what the code does ("the lookup gives
    `None`") in words the wrong-value reader would take for a value that was got.
    """
    crash = crash_said(text, blocks)
    for block in reversed(blocks):
        if block.kind in ("traceback", "console"):
            chain = exception_chain(_traceback_lines(block.text))
            if chain:
                return ReportedFailure(tuple(chain), source=f"block {block.number}", crash=crash)
    if TRACEBACK_HEADER in text:
        chain = exception_chain(_traceback_lines("\n".join(line for _, line in prose_lines(text, blocks))))
        if chain:
            return ReportedFailure(tuple(chain), source="the prose", crash=crash)
    if crash:
        return ReportedFailure(source="the report's text", crash=crash)
    wrong = wrong_value(text, blocks)
    return ReportedFailure(wrong_value=wrong, source="the prose") if wrong is not None else ReportedFailure()


def wrong_value(text: str, blocks: list[Block]) -> WrongValue | None:
    """The "expected ... got ..." statement of the report, each value inline or in the block after its label.

    Without a value that was got there is no wrong value to look for: None.
    """
    for _, line in prose_lines(text, blocks):
        both = _ONE_LINE.search(line)
        if both:
            return WrongValue(both["expected"].strip("`").strip(), both["actual"].strip("`").rstrip(".").strip())
    # What a label says of itself in parentheses ("Expected output (what NumPy gives):") names no got value.
    actual = _labelled_value(_ACTUAL, text, blocks, aside=True) or _labelled_value(_OUTPUT, text, blocks)
    if not actual:
        return None
    return WrongValue(_labelled_value(_EXPECTED, text, blocks), actual)


def _labelled_value(label: re.Pattern[str], text: str, blocks: list[Block], aside: bool = False) -> str:
    """The value after the first line ``label`` matches (with ``aside``, outside its parentheses): in backticks
    or after a colon there, else the next block."""
    for at, line in prose_lines(text, blocks):
        found = label.match(re.sub(r"\([^()\n]*\)\s*:", ":", line) if aside else line)
        if not found or line.lstrip().startswith("#"):  # a heading names the problem, it quotes no value
            continue
        value = _PARENTHESIS.sub("", found.group("value").strip())
        quoted = _INLINE.findall(value)
        if quoted:
            return str(quoted[0]).strip()
        value = value.strip().rstrip(".")
        if _VALUE.match(value):
            return value
        following = [block for block in blocks if block.line > at + 1]
        if following and following[0].line <= at + 3 and following[0].kind == "output":
            return following[0].text.strip()
    return ""


def _traceback_lines(text: str) -> list[str]:
    """A pasted traceback's lines; a ``>>>`` session's prompts and a ``$`` line are input, not output."""
    return [line for line in text.splitlines() if not re.match(r"^(>>>|\.\.\.|\$) ", line)]


