"""Does a bug report describe a crash: the process killed by a signal rather than a Python exception?

A segfault or an abort leaves no traceback to match: what a report holds is
the shell's or Python's word for it (``Segmentation fault (core dumped)``,
``Fatal Python error: Segmentation fault``, ``terminated by signal SIGSEGV``,
``Aborted``, an absl ``Check failed:`` line). Such a report's bug is the crash
itself, so triage counts a run killed by a signal as the bug and the bisect it
proposes takes ``--crash bad`` (a segfault report once read "not reproduced on
the reporter's release (crashed)" and ran no bisect).

Only what the reporter wrote about the run is read: the prose and the blocks
that are not the code (a ``signal.SIGSEGV`` in the code itself is not a crash).
"""

from __future__ import annotations

import re
from typing import Mapping, Optional

from . import block_outcome
from .block_outcome import BlockOutcome
from .issue_text import Block, prose_lines

CRASH_WORDS = re.compile(
    r"(?i)(seg(?:mentation)?[ -]?fault(?:s|ed|ing)?|core dumped|\bSIG(?:SEGV|ABRT|BUS|ILL|FPE)\b"
    r"|Fatal Python error|\bAborted\b|\babort(?:s|ing|\(\))?(?![\w-])|(?:terminated|killed) by signal"
    r"|Illegal instruction|Bus error|\bCheck failed:)")
"""The words a crash is reported in: a signal's name, the shell's and Python's messages for one, an abort."""

_CODE_KINDS = ("python", "console")

CRASH_BAD_IF = "(?m)^Fatal Python error: "
"""The ``bad_if`` of a check of a crash report where no difference between runs was found (the block as it is):
a run killed by a signal is the bug through the bisect's ``--crash bad``; a run that exits with an exception
failed otherwise (inconclusive, skipped), unless Python's own crash handler said so (``Fatal Python error:``,
printed before it dies where faulthandler is on)."""


def crash_said(text: str, blocks: list[Block]) -> str:
    """The first line of the report that says the process crashed (``Segmentation fault (core dumped)``), cut
    to 100 characters; "" where none does. The output the reporter pasted is read before the prose: it holds the
    shell's or Python's own words, where a title says it in the reporter's."""
    lines = [line for block in blocks if block.kind not in _CODE_KINDS for line in block.text.splitlines()]
    lines += [line for _, line in prose_lines(text, blocks)]
    for line in lines:
        if CRASH_WORDS.search(line):
            return line.strip().lstrip("#").strip()[:100]
    return ""


def crash_counts(reason: str, bisect: bool) -> str:
    """What the crash means for the answer: the bisect's ``--crash bad``, or, where no run here crashed and none is
    proposed, that the crash is untested here (another platform's or build's crash is not this machine's)."""
    if bisect:
        return "a crash is an outcome like any other here, so the bisect counts a probe that crashes as bad (--crash bad)"
    if "killed by signal" not in reason:
        return "no run here was killed by a signal: the crash is untested here (another platform or build?)"
    return "no bisect to count it in"


def crash_reason(said: str, outcomes: Mapping[str, Optional[BlockOutcome]]) -> str:
    """Why triage takes the report as a crash, in words: what its text says (``said``), and which runs a signal
    killed; "" where neither."""
    reasons = [f"the report says {said!r}"] if said else []
    reasons += [f"jax {version} was {block_outcome.exit_words(seen['exit'])}" for version, seen in outcomes.items()
                if seen is not None and block_outcome.is_crash(seen)]
    return "; ".join(reasons)
