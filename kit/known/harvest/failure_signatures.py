"""When two failures of one test are the same problem: the exception they name, and what a message check expected.

Standalone (``re`` only): the harvest's pytest plugin runs in a release's
Python and never imports the kit, so `kit.known.harvest.pytest_run` copies
this file beside it, and the plugin stops running an entry's tests once one
of them fails as it did at the fix's parent (`same_problem`).
"""

from __future__ import annotations

import re

_EXCEPTION = re.compile(r"^E\s+(?:[\w.]*JaxStackTraceBeforeTransformation: )?"  # JAX's traceback filtering's wrapper
                        r"([A-Za-z_][\w.]*(?:Error|Exception|Exit|Interrupt))\b", re.MULTILINE)
_NEW_HELPER = re.compile(r"module 'jax[\w.]*' has no attribute")
"""A parent that lacks a helper the fix added and its test calls: its failure says nothing of the bug's kind."""
_BARE_ASSERT = re.compile(r"^E\s+assert\b", re.MULTILINE)
_MISSING_ATTRIBUTE = re.compile(r"has no attribute '?([A-Za-z_][\w.]*)'?")
_EXPECTED = re.compile(r"^E\s+(?:AssertionError: )?(.+?) (?:not found in|does not match) ", re.MULTILINE)


def exception_name(message: str) -> str:
    """The exception a failure's ``E`` lines name (``AssertionError``, ``jax.errors.X``: its last part), or ""."""
    found = _EXCEPTION.search(message)
    if found:
        return found.group(1).rsplit(".", 1)[-1]
    return "AssertionError" if _BARE_ASSERT.search(message) else ""  # pytest shows a plain assert as its expression


def failure_signature(message: str) -> tuple[str, str]:
    """What two failures of one test must share to be the same problem: the exception, and for a message check
    (``X not found in Y``, ``X does not match Y``) the X that was expected: the same assertion, not a later one
    of the same test that a newer release fails for its own reasons."""
    expected = _EXPECTED.search(message)
    if expected:
        return exception_name(message), expected.group(1).strip()
    # A missing attribute is the same failure only where the same attribute is missing (t11: harvest-6204db0b0d's
    # parent lacked `cache_keys` and `_invars`, 0.6.1 `_dedup_consts`, a helper of another era, said "present").
    missing = _MISSING_ATTRIBUTE.findall(message)
    return exception_name(message), f"no attribute {missing[-1]!r}" if missing else ""


def lacks_new_helper(message: str) -> bool:
    """Whether a failure at the parent was only the test calling what the fix added (``module 'jax._src.compiler'
    has no attribute '_add_disabled_hlo_pass'``): every older release fails so too, bug or none."""
    return _NEW_HELPER.search(message) is not None


def same_problem(parent_message: str, message: str) -> bool:
    """Whether a test's failure now is the one it had at the fix's parent: the bug is present."""
    return not lacks_new_helper(parent_message) and failure_signature(parent_message) == failure_signature(message)
