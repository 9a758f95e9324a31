"""``bad_if`` matched with a time limit: a pattern that backtracks without end gives up, it never hangs a run.

A user's regular expression such as ``(a+)+$`` takes time exponential in the
length of a line it almost matches (30 characters: a minute; a line of a few
kB: longer than anyone waits), and Python's ``re`` cannot be told to stop. A
signal would interrupt it only in the main thread, and a bisect judges its
probes in threads (``--jobs``); so the search runs in a child interpreter that
is killed at `LIMIT_S`. That costs one bare interpreter start (some tens of
milliseconds) for each failed run a ``bad_if`` judges, never more.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from dataclasses import dataclass
from typing import Sequence

from ..errors import out_of_files

LIMIT_S = 5.0
"""How long one ``bad_if`` search may take: a sane pattern over a record's tail takes milliseconds."""

_SEARCH = ("import json, re, sys; asked = json.load(sys.stdin); "
           "pattern = re.compile(asked['pattern'], asked['flags']); "
           "found = [[at, hit.group(0)] for at, hit in enumerate(map(pattern.search, asked['texts'])) if hit][:1]; "
           "print(json.dumps(found[0] if found else None))")


@dataclass(frozen=True)
class Searched:
    """What a bounded search found: the matched text (None: no match), or why it gave up."""

    matched: str | None
    gave_up: str = ""
    text: int = 0
    """Which of the texts searched held the match (the first that did)."""


def bounded_search(pattern: re.Pattern[str], text: str | Sequence[str], limit_s: float | None = None) -> Searched:
    """``pattern.search`` over ``text`` (or each of several texts in turn, up to the first match) in a child
    interpreter, killed after ``limit_s`` (default `LIMIT_S`): one start, however many texts."""
    limit = LIMIT_S if limit_s is None else limit_s
    texts = [text] if isinstance(text, str) else list(text)
    asked = json.dumps({"pattern": pattern.pattern, "flags": pattern.flags, "texts": texts})
    try:
        done = subprocess.run([sys.executable, "-I", "-S", "-c", _SEARCH], input=asked, capture_output=True,
                              text=True, timeout=limit)
    except subprocess.TimeoutExpired:
        return Searched(None, f"matching bad_if {pattern.pattern!r} against the output did not finish within "
                              f"{limit:g} s (a pattern that backtracks without end, as nested repeats like "
                              "'(a+)+' do), so it was stopped; make its repeats unambiguous")
    except OSError as exc:
        fault = out_of_files(exc)  # no descriptor for its pipes: no answer on bad_if either way
        if fault is not None:
            raise fault from None
        return Searched(None, f"matching bad_if could not start a Python to run it ({exc.strerror or exc})")
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or [f"exit code {done.returncode}"])[-1]
        return Searched(None, f"matching bad_if {pattern.pattern!r} failed ({last[:200]})")
    found = json.loads(done.stdout)
    return Searched(found[1], text=found[0]) if isinstance(found, list) else Searched(None)
