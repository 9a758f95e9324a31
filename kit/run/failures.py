"""Failure classes: what a failed script died of, and which failures can count as the bug.

A script check's exit code says *that* it failed (kit/run/protocol.py); real
repros fail in ways that are not the bug. Told apart here, from its output:

* **an uncaught exception** (`uncaught_exception`): its type and message,
  read from the last traceback in the output. JAX prints a note after the
  exception line ("For simplicity, JAX has removed its internal frames ..."),
  and Python 3.11+ prints notes after the message, so the last line of output
  is not the exception: the traceback is parsed from its header down.
* **an import that failed** for a module that is not JAX's own (flax, optax,
  a typo): never the bug, always ``inconclusive``, with the package to add to
  ``requires``.
* **a script that does not compile** (SyntaxError) on the release's Python:
  the script's problem, ``inconclusive``. One that is not Python source text
  on any Python (a NUL byte, bytes its encoding cannot decode: `source_problem`)
  is the same, found before it runs: Python's own words for it come without a
  traceback, and read as a plain exit 1.
* with **bad_if** (a regex): only a failure whose output matches is
  ``affected``; any other failure is ``inconclusive`` (a bisect skips it and
  names it), as cargo-bisect-rustc's ``--regress error|ice``.

`judge` applies these to what `protocol.observation` read from the exit
code and KIT_RESULT. It reads only what it is given; ``bad_if`` is searched
in a child interpreter with a time limit (`kit.run.bounded_match`).
"""

from __future__ import annotations

import io
import re
import tokenize
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Mapping, Sequence

from packaging.utils import canonicalize_name

from ..records import RunOutcome, Status, Verdict
from ..json_types import JsonObject
from ..requirements import package_for_module
from . import bounded_match

TRACEBACK_HEADER = "Traceback (most recent call last):"

# JAX's own modules: an import of these that fails is about the release under test, not a missing package.
_JAX_MODULES = re.compile(r"^(jax|jaxlib|jax_[a-z0-9_]+)$")

_EXCEPTION_LINE = re.compile(r"^([A-Za-z_][\w.]*)(?::[ \t]?(.*))?$")

# What ends an exception's message in the output: JAX's note and its separator, and a new chain link.
_CHAINED = ("During handling of the above exception", "The above exception was the direct cause")
_AFTER_MESSAGE = ("--------------------", "For simplicity, JAX has removed its internal frames", *_CHAINED)

_IMPORT_TYPES = ("ModuleNotFoundError", "ImportError")
_SYNTAX_TYPES = ("SyntaxError", "IndentationError", "TabError")

_NO_MODULE = re.compile(r"No module named '([^']+)'")
_CANNOT_IMPORT = re.compile(r"cannot import name '([^']+)' from (?:partially initialized module )?'([^']+)'")

BAD_IF_RULES = 2
"""How ``bad_if`` is judged, in a script probe's identity: 2 since a chain link replaced by a later exception of its
class is no match (`replaced_links`). A probe kept under another rule is run again, never read as this one's."""



def script_probe_subject(parameters: Mapping[str, object]) -> dict[str, object]:
    """What a ``--script`` probe's identity holds of it: its parameters less its path, and, where a ``bad_if``
    judges it, the rule that judged it (`BAD_IF_RULES`): a bisect and a triage that hands its runs on key alike."""
    subject = {name: value for name, value in parameters.items() if name != "script"}
    if subject.get("bad_if"):
        subject["bad_if_rules"] = BAD_IF_RULES
    return subject


HEADLINE_CHARS = 200
"""How much of an exception a matrix cell, a probe line or a reason shows (the record keeps the message)."""


@dataclass(frozen=True)
class RaisedException:
    """An exception that ended a script, as its traceback printed it."""

    type: str
    """As printed: ``TypeError``, ``jax.errors.ConcretizationTypeError``, ``__main__.MyError``."""
    message: str
    """Every line of the message, up to the notes printed after it."""
    led_to: str = field(default="", compare=False)
    """How the next link of its chain came of it: ``cause`` ("The above exception was the direct cause ...",
    ``raise ... from``), ``context`` ("During handling of the above exception ..."), "" for the last link."""

    @property
    def name(self) -> str:
        """The class name without its module (``ConcretizationTypeError``)."""
        return self.type.rsplit(".", 1)[-1]

    def headline(self, limit: int = HEADLINE_CHARS) -> str:
        """``TypeError: first line of the message``, cut to ``limit`` characters."""
        first = next((line.strip() for line in self.message.splitlines() if line.strip()), "")
        text = f"{self.type}: {first}" if first else self.type
        return text if len(text) <= limit else text[: limit - 1] + "…"

    def to_json(self) -> dict[str, str]:
        return {"type": self.type, "message": self.message}


def uncaught_exception(lines: Sequence[str]) -> RaisedException | None:
    """The exception the last traceback in ``lines`` ends with, or None when there is none.

    The traceback's frames (indented lines under its header) are skipped; the
    first line after them names the exception, and its message runs on until
    a note (JAX's, or a chained traceback's preamble) or the end. A script
    that does not compile prints no header, only the ``File ..., line N``
    frame, the caret and the error: that is found too.
    """
    start = _last_traceback(lines)
    return None if start is None else _exception_at(lines, start)


def _exception_at(lines: Sequence[str], start: int) -> RaisedException | None:
    """The exception named after the frames that start at ``start`` (see `uncaught_exception`)."""
    at = start
    while at < len(lines) and (not lines[at].strip() or lines[at][:1] in (" ", "\t")):
        at += 1  # frames, source lines, carets, "[Previous line repeated ...]"
    if at >= len(lines):
        return None
    named = _EXCEPTION_LINE.match(lines[at].rstrip())
    if not named:
        return None
    message = [named.group(2) or ""]
    for line in lines[at + 1:]:
        if line.startswith(_AFTER_MESSAGE) or line.rstrip() == TRACEBACK_HEADER:
            break
        message.append(line.rstrip())
    return RaisedException(named.group(1), "\n".join(message).strip())


def exception_chain(lines: Sequence[str]) -> list[RaisedException]:
    """Every exception of the last traceback's chain (``__cause__``, ``__context__``), the first cause first.

    Python prints a chain as one traceback per exception, joined by "The above
    exception was the direct cause ..." or "During handling of the above
    exception ..."; the last one printed is the one that ended the script
    (`uncaught_exception`). The same failure can end in another link on
    another build (``RuntimeError: generator raised StopIteration`` on a
    release, ``StopIteration`` itself on a commit's overlay), so ``bad_if`` is
    matched against each. Only what the kept output holds is found: a link
    whose lines scrolled out of it is not.
    """
    headers = [at for at, line in enumerate(lines) if line.rstrip() == TRACEBACK_HEADER]
    if not headers:
        last = uncaught_exception(lines)
        return [last] if last is not None else []
    chain: list[RaisedException] = []
    led_to = ""
    for k in range(len(headers) - 1, -1, -1):
        raised = _exception_at(lines[:headers[k + 1]] if k + 1 < len(headers) else lines, headers[k] + 1)
        if raised is not None:
            chain.insert(0, replace(raised, led_to=led_to))
        between = lines[headers[k - 1] + 1:headers[k]] if k > 0 else []
        joined = next((line for line in between if line.startswith(_CHAINED)), None)
        if joined is None:
            break
        led_to = "cause" if joined.startswith(_CHAINED[1]) else "context"
    return chain


def _last_traceback(lines: Sequence[str]) -> int | None:
    """Where the frames of the last traceback start: after its header, or at a compile error's ``File`` line."""
    for at in range(len(lines) - 1, -1, -1):
        if lines[at].rstrip() == TRACEBACK_HEADER:
            return at + 1
    for at in range(len(lines) - 1, -1, -1):  # no header: a SyntaxError in the script itself
        if re.match(r'^  File ".*", line \d+$', lines[at].rstrip()):
            return at
    return None


@dataclass(frozen=True)
class ImportFailure:
    """An import of a module that is not JAX's own failed: what, and whether its package is here."""

    module: str
    package: str
    installed: str | None
    """The version of ``package`` in the environment, or None when it is not installed."""

    def reason(self, exception: RaisedException) -> str:
        if self.installed is None:
            return f"the script could not import {self.package}; add it to requires"
        return (f"the script could not import from {self.package} {self.installed} ({exception.headline()}): "
                f"the {self.package} installed for this release lacks it; pin one that has it in requires")

    def to_json(self) -> JsonObject:
        return {"module": self.module, "package": self.package, "installed": self.installed}


def import_failure(exception: RaisedException, versions: Mapping[str, str]) -> ImportFailure | None:
    """The failed import ``exception`` reports, unless it is of JAX's own modules (or not an import at all)."""
    if exception.name not in _IMPORT_TYPES:
        return None
    found = _CANNOT_IMPORT.search(exception.message)
    module = found.group(2) if found else None
    if module is None:
        missing = _NO_MODULE.search(exception.message)
        module = missing.group(1) if missing else None
    if module is None:
        return None
    top = module.split(".")[0]
    if _JAX_MODULES.match(top):
        return None  # jax.experimental.foo gone: that is about the release, and may be the bug itself
    package = package_for_module(top)
    installed = {canonicalize_name(name): version for name, version in versions.items()}.get(canonicalize_name(package))
    return ImportFailure(module, package, installed)


def failed(code: int | None) -> bool:
    """Did the script fail: a non-zero exit it chose (125 is a skip, not a failure) or a signal? A timeout is not."""
    return code is not None and code not in (0, 125)


def judge(observed: RunOutcome, code: int | None, tail: Sequence[str], bad_if: re.Pattern[str] | None,
          versions: Mapping[str, str], python: str | None = None) -> RunOutcome:
    """A script run's outcome once its failure is classed (see the module's docstring): a named step.

    ``observed`` is `protocol.observation`'s for exit ``code``; ``tail`` the
    last lines of the script's output; ``versions`` what the environment has
    installed. The evidence gains ``exception``, ``import_error``, ``bad_if``
    where they apply. A run that did not fail is returned as it was.
    """
    if not failed(code):
        return observed
    evidence: JsonObject = {}
    exception = uncaught_exception(tail)
    if exception is not None:
        evidence["exception"] = exception.to_json()
        chain = exception_chain(tail)
        if len(chain) > 1:  # what it was raised from, as docs/checks.md's bad_if reads it
            evidence["exception_chain"] = [link.to_json() for link in chain]
        imported = import_failure(exception, versions)
        if imported is not None:
            return observed.inconclusive(imported.reason(exception), **evidence, import_error=imported.to_json())
        if exception.name in _SYNTAX_TYPES:
            on = f" on Python {python}" if python else ""
            return observed.inconclusive(f"the script does not compile{on} ({exception.headline()})", **evidence)
    how = f"raised {exception.headline()}" if exception is not None else _exit_words(observed.reason)
    if bad_if is not None:
        searched = _bad_if_evidence(bad_if, tail)
        evidence["bad_if"] = searched.to_json()
        if searched.gave_up:
            return observed.inconclusive(f"the script {how}, and {searched.gave_up}", **evidence)
        if searched.matched is not None:
            where = "its exception chain" if searched.matched_in else "its output"
            return observed.judged(Verdict.AFFECTED, f"the script {how}, and {where} matches bad_if {bad_if.pattern!r}",
                                   **evidence)
        if observed.status is Status.CRASHED:
            # Killed by a signal (or past exit 127): a crash stays one, and the bisect counts it as --crash says
            # (skip by default). Made inconclusive here, a crash ignored --crash bad whenever a bad_if was given,
            # and a segfault report's bisect stopped at its own bad end ("skip, not bad").
            return observed.with_reason(f"the script {how}, and its output does not match bad_if "
                                        f"{bad_if.pattern!r}").with_evidence(**evidence)
        return observed.inconclusive(f"the script failed otherwise: it {how}, and its output does not "
                                     f"match bad_if {bad_if.pattern!r}", **evidence)
    if exception is not None and observed.verdict is Verdict.AFFECTED:
        return observed.judged(Verdict.AFFECTED, f"the script {how} (exit {code}: affected)", **evidence)
    return observed.with_evidence(**evidence)


@dataclass(frozen=True)
class BadIfSearch:
    """``bad_if`` searched in a failed run's output: what it matched (cut), in which exception link, or why it
    gave up (a runaway pattern)."""

    pattern: str
    matched: str | None
    matched_in: str = ""
    gave_up: str = ""

    def to_json(self) -> JsonObject:
        found: JsonObject = {"pattern": self.pattern, "matched": self.matched}
        if self.matched_in:
            found["matched_in"] = self.matched_in
        if self.gave_up:
            found["gave_up"] = self.gave_up
        return found


def _bad_if_evidence(bad_if: re.Pattern[str], tail: Sequence[str]) -> BadIfSearch:
    """``bad_if`` searched in the output, then in each link of the exception chain as ``Type: message``.

    Each link is searched on its own (an anchored ``^StopIteration$`` matches
    the link, not the whole output), under its printed type and its bare
    class name (``jax.errors.X`` and ``X``), so a pattern written for one
    link matches whichever link a release or an overlay ends with.
    """
    chain = exception_chain(tail)
    replaced = replaced_links(chain)
    links = [form for raised in chain if raised not in replaced for form in _link_forms(raised)]
    printed = {f"{link.type}: {link.message.splitlines()[0]}" if link.message else link.type for link in replaced}
    shown = [line for line in tail if line.rstrip() not in printed]  # their exception lines: not what it ended in
    searched = bounded_match.bounded_search(bad_if, ["\n".join(shown), *links])  # a runaway pattern gives up
    matched = searched.matched[:HEADLINE_CHARS] if searched.matched is not None else None
    within = (f"exception chain: {links[searched.text - 1][:HEADLINE_CHARS]}"
              if searched.matched is not None and searched.text > 0 else "")
    return BadIfSearch(bad_if.pattern, matched, within, searched.gave_up or "")


def replaced_links(chain: Sequence[RaisedException]) -> list[RaisedException]:
    """The links of a chain that a later exception of the same class with another message replaced: the release
    raises its own error *from* the old one (jaxlib 0.6.2's informative ``ValueError: Exception raised while
    checking equality of metadata fields ...`` from the ``ValueError: The truth value ... is ambiguous`` a report
    named: the fix, t11), so the old one is not the failure the run ended in. A cause of another class (a
    generator's ``StopIteration`` under ``RuntimeError``) is the same failure in another link, and stays."""
    if len(chain) < 2:
        return []
    last = chain[-1]
    return [link for link in chain[:-1] if link.name == last.name and link.message != last.message]


def _link_forms(raised: RaisedException) -> list[str]:
    """How a chain link is matched: ``type: message`` as printed, and again under its bare class name."""
    return [f"{kind}: {raised.message}" if raised.message else kind for kind in dict.fromkeys((raised.type, raised.name))]


def _exit_words(reason: str) -> str:
    """How a failure without a traceback ended, in the exit observation's words ("exited 3", "was killed by ...")."""
    return (reason or "the script failed").removeprefix("the script ").split(" (", 1)[0]


def source_problem(script: Path) -> str | None:
    """Why ``script`` cannot be Python source text on any Python (PEP 263: its declared encoding, UTF-8 without
    one), in words; None when it can. A file that cannot be read is left to the run, which says so itself."""
    try:
        data = script.read_bytes()
    except OSError:
        return None
    nul = data.find(b"\0")
    if nul >= 0:
        return f"it is not Python source text (byte {nul} is a NUL byte: a binary file?)"
    try:
        encoding, _lines = tokenize.detect_encoding(io.BytesIO(data).readline)
        data.decode(encoding)
    except SyntaxError as exc:  # an unknown or contradictory coding cookie
        return f"it is not Python source text ({exc.msg})"
    except UnicodeDecodeError as exc:
        return f"it is not Python source text (byte {exc.start} is not {exc.encoding}, and no other encoding is declared)"
    return None


def not_source(failed_run: RunOutcome, problem: str) -> RunOutcome:
    """A failed run once its script proved not to be Python source (`source_problem`): a named step, inconclusive,
    as a script that does not compile is, never a verdict on the release."""
    return failed_run.inconclusive(f"the script does not compile: {problem}", not_source=problem)
