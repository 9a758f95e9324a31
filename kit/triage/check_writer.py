"""``checks/<name>.py`` from a report: the block as the text holds it, and only the protocol around it.

Two shapes, by what the report says went wrong:

* **an exception**: the block itself, under a docstring that says where it
  came from. It exits 1 with a traceback when it fails; the kit matches that
  against the ``bad_if`` from the reported exception (kit/triage/failure_pattern.py).
* **a wrong value**: the block runs with its printed output kept, and the
  numbers printed are compared with the values the report quotes: the wrong
  one printed is exit 1 (with a line ``bad_if`` matches, so that another
  failure of the block is not the bug), the expected one exit 0, neither 125.

Nothing is added to the block's code: a report's code is what the reporter ran.
"""

from __future__ import annotations

import hashlib
import json
import re
import string
import textwrap
from dataclasses import dataclass
from pathlib import Path

from ..atomic_files import atomic_write_texts
from ..check_settings import CHECK_NAME
from ..errors import UsageError
from .block_outcome import Feature, BlockOutcome
from .issue_text import Block
from .reported_failure import ReportedFailure, WrongValue

WRONG_VALUE_LINE = "REPORTED WRONG VALUE:"
"""What the wrong-value wrapper prints before it exits 1; its ``bad_if`` matches this line."""

WRONG_VALUE_BAD_IF = "(?m)^" + WRONG_VALUE_LINE

WRITTEN_BY = "written by nox -s triage"
"""In every check's first line: a later triage may replace such a file, never another."""


# The wrong-value check after its docstring; `string.Template` fills in the block, the values and the line.
_WRONG_VALUE_TEMPLATE = string.Template(textwrap.dedent('''
        import contextlib
        import io
        import re
        import sys

        BLOCK = $block
        EXPECTED = $expected
        WRONG = $wrong
        NUMBER = re.compile(r"[-+]?(?:\\d+\\.\\d*|\\.\\d+|\\d+)(?:[eE][-+]?\\d+)?")


        class Tee(io.StringIO):
            def write(self, text):
                sys.__stdout__.write(text)
                return super().write(text)


        def numbers(text):
            return [(float(found), found) for found in NUMBER.findall(text)]


        def decimals(digits):
            return len(digits.split(".")[1].split("e")[0].split("E")[0]) if "." in digits else 0


        def close(printed, quoted):
            """Equal to the digits both write: 0.3322915 matches 0.33229148; 0.9478 does not match 0.947667."""
            places = min(decimals(printed[1]), decimals(quoted[1]))
            return abs(printed[0] - quoted[0]) <= 0.5 * 10.0 ** -places + 1e-12 * abs(quoted[0])


        def shows(printed, quoted_text):
            quoted = numbers(quoted_text)
            if not quoted:
                return " ".join(quoted_text.split()) in " ".join(printed.split())
            got = numbers(printed)
            return any(all(close(got[at + k], quoted[k]) for k in range(len(quoted)))
                       for at in range(len(got) - len(quoted) + 1))


        kept = Tee()
        with contextlib.redirect_stdout(kept):
            exec(compile(BLOCK, "<report block $number>", "exec"), {"__name__": "__main__"})
        printed = kept.getvalue()
        wrong, expected = shows(printed, WRONG), bool(EXPECTED) and shows(printed, EXPECTED)
        if wrong and not expected:
            print("$line the block printed " + repr(WRONG) + " again")
            sys.exit(1)
        if expected and not wrong:
            print("the block printed the expected " + repr(EXPECTED))
            sys.exit(0)
        if not EXPECTED and not wrong and numbers(printed):
            print("the block no longer printed " + repr(WRONG))
            sys.exit(0)
        print("cannot tell: the block printed " + ("both values" if wrong else "neither the expected nor the wrong value"))
        sys.exit(125)
    '''))


def is_check_name(text: str) -> bool:
    """Could ``text`` name a check: matrix.toml's one rule for a check's name (ASCII letters, digits, - and _, a
    letter or digit first), which every name that becomes ``checks/NAME.py`` follows: never a path."""
    return bool(CHECK_NAME.fullmatch(text))


BEHAVES_AS_REPORTED = "BEHAVES AS REPORTED:"
"""What a difference check prints before it exits 1 (the run behaves as on the release the bug was seen on)."""

DIFFERENCE_BAD_IF = "(?m)^" + BEHAVES_AS_REPORTED

_OUTCOME_SOURCE = Path(__file__).with_name("block_outcome.py").read_text(encoding="utf-8")
"""The code a difference check carries: it runs in JAX's environments, which never import the kit."""


@dataclass(frozen=True)
class Judged:
    """A difference check's references: the two runs' outcomes, the features that differ, and the releases."""

    bad: BlockOutcome
    good: BlockOutcome
    features: tuple[Feature, ...]
    bad_release: str
    good_release: str


def outcome_check_text(block: Block, header: str, about: list[str], judged: Judged | None) -> str:
    """A check that runs the block and keeps its outcome (kit/triage/block_outcome.py); without ``judged`` it
    only captures (the block's own exit), with it, exit 1 as on ``bad_release``, 0 as on ``good_release``, else 125."""
    doc = "\n".join([header, "", *about, "",
                     f"The code is block {block.number} of the report, as it holds it (BLOCK below); the rest of this "
                     "file runs it and compares what it did (kit/triage/block_outcome.py)."])
    docstring = '"""' + doc.replace("\\", "\\\\").replace('"""', '\\"\\"\\"') + '\n"""\n'
    references = ("None, None, [], ('', '')" if judged is None else
                  f"json.loads({json.dumps(judged.bad)!r}), json.loads({json.dumps(judged.good)!r}), "
                  f"json.loads({json.dumps(list(judged.features))!r}), "
                  f"({judged.bad_release!r}, {judged.good_release!r})")
    tail = (f"\n\nBLOCK = {block.code!r}\n\nif __name__ == \"__main__\":\n"
            f"    main(BLOCK, '<report block {block.number}>', {references}, {BEHAVES_AS_REPORTED!r})\n")
    return docstring + "\n" + _OUTCOME_SOURCE.rstrip() + tail


@dataclass(frozen=True)
class WrittenCheck:
    path: Path
    bad_if: str


def check_name(source: str, key: str = "") -> str:
    """A check's name from the report: ``issue-jax-ml-jax-25329`` for ``OWNER/REPO#N``; for a file, its name and
    six hex digits of its whole path (``key``), ``kwarg-f-3fa2c1``: two reports both called issue.md get two checks,
    and triaging the same file again replaces its own. Always a name by `is_check_name`'s rule."""
    if "#" in source:
        return _name_part("issue-" + source.replace("/", "-").replace("#", "-"))
    return _name_part(Path(source).stem) + "-" + hashlib.sha256((key or source).encode("utf-8")).hexdigest()[:6]


def _name_part(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_-]+", "-", text).strip("-_").lower() or "issue"


def check_text(block: Block, failure: ReportedFailure, bad_if: str, header: str) -> str:
    """The script's text: a docstring naming the report, the block, the failure and bad_if; then the protocol."""
    doc = "\n".join([header, "", f"Reported failure: {failure.sentence()}", f"bad_if: {bad_if}", "",
                     f"The code is block {block.number} of the report, as it holds it; nothing else was changed."])
    docstring = '"""' + doc.replace("\\", "\\\\").replace('"""', '\\"\\"\\"') + '\n"""\n'
    if failure.wrong_value is None:
        return docstring + "\n" + block.code.rstrip() + "\n"
    return docstring + _wrong_value_wrapper(block, failure.wrong_value)


def write_check(folder: Path, name: str, text: str, bad_if: str) -> WrittenCheck:
    """``folder/name.py``; a file there that a triage did not write (a check of the user's) is never replaced."""
    if not is_check_name(name):  # checked where it entered too: a name is never a path out of ``folder``
        raise UsageError(f"{name!r} is not a check name", "use ASCII letters, digits, - and _")
    path = folder / f"{name}.py"
    refuse_foreign(path)
    folder.mkdir(parents=True, exist_ok=True)
    atomic_write_texts({path: text})
    return WrittenCheck(path, bad_if)


def refuse_foreign(path: Path) -> None:
    """UsageError where ``path`` holds a file a triage did not write (a check of the user's): it is never replaced."""
    if path.exists() and WRITTEN_BY not in path.read_text(encoding="utf-8", errors="replace")[:500]:
        raise UsageError(f"{path} is there already and was not written by a triage: it is left as it is",
                         "give the check another name with --name NAME, or another folder with --checks-dir DIR")


def _wrong_value_wrapper(block: Block, wrong: WrongValue) -> str:
    """Run the block with its output kept, then say which of the quoted values it printed (stdlib only)."""
    return _WRONG_VALUE_TEMPLATE.substitute(block=repr(block.code), expected=repr(wrong.expected),
                                            wrong=repr(wrong.actual), number=block.number, line=WRONG_VALUE_LINE)
