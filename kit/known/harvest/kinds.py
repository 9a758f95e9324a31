"""What kind of problem a harvested entry is, read from how its confirmed tests failed at the parent.

The parent's failure is the bug as a user met it, so its message says the
kind: a *crash* (the process died), an *exception* raised where none belongs
(a ``TypeError`` out of JAX), an *error message* that is missing or says the
wrong thing (``assertRaisesRegex`` that did not match, ``Exception not
raised``), a *performance* problem (what the test counts is compilations,
traces or cache hits), else *wrong values* (an assertion on a result). An
entry's kind is the gravest of its confirmed tests' (a test that failed only
for lack of a helper the fix added counts last); a binary entry has none: no
failure was seen at its parent. An entry whose fix's title says it adds a feature, and no fix, is a
*feature*: an audit says a release lacks it, never that the release has a problem.
"""

from __future__ import annotations

import re

from ...json_types import JsonObject, as_list, as_object
from .failure_signatures import exception_name, lacks_new_helper
from .verdicts import CONFIRMED

CRASH, EXCEPTION, ERROR_MESSAGE, PERFORMANCE, WRONG_VALUE, FEATURE = (
    "crash", "exception", "error-message", "performance", "wrong-values", "feature")
"""The hand catalogue's words where it has them (`kit.known.catalogue.KINDS`), and those it lacks."""
KINDS = (CRASH, EXCEPTION, WRONG_VALUE, ERROR_MESSAGE, PERFORMANCE, FEATURE)
"""Gravest first: an entry whose tests show two kinds is the first of them."""
_ADDS = re.compile(r"^(?:\[[^\]]*\]\s*)?(?:adds?|added|implement(?:s|ed)?|support(?:s|ed)?|introduces?|enables?)"
                   r"\b(?!\s+tests?\b)", re.IGNORECASE)
_FIXES = re.compile(r"\b(?:fix\w*|bug|missing|wrong|incorrect|crash\w*|regression)\b", re.IGNORECASE)
"""A fix's title that says it adds what was not there, and no fix: its test failed at the parent because the
feature was not yet written (t5: "Adds a PYTORCH_CUBIC interpolation to jax.image.resize" audited as a problem)."""

_CRASH_WORDS = ("fatal python error", "segmentation fault", "core dumped", "aborted", "check failed")
_MESSAGE_WORDS = ("does not match", "not found in", "exception not raised", "not raised", "error message")
_PERFORMANCE_WORDS = ("compil", "cache", "retrac", "trace_count", "num_traces", "cache_miss", "memory")


def failure_kind(test: str, message: str) -> str:
    """One test's kind from its node id and its failure message at the parent."""
    lowered = message.lower()
    if any(word in lowered for word in _CRASH_WORDS):
        return CRASH
    name = exception_name(message)
    # JAX's tests run with jax_numpy_rank_promotion='raise'; with JAX's default the same code broadcasts silently
    # and the result's shape is wrong (t11: harvest-21f9d23658's polyfit covariance, (3,3,1) for (3,3,4)).
    if "jax_numpy_rank_promotion='raise'" in message:
        return WRONG_VALUE
    # An AssertionError through JAX's traceback wrapper is JAX's own assert failing inside a transformation, not
    # the test's on a result (t5: harvest-719d18dafd's checkify assert was said "wrong-values").
    if name and (name != "AssertionError" or "JaxStackTraceBeforeTransformation: AssertionError" in message):
        return EXCEPTION
    if any(word in lowered for word in _MESSAGE_WORDS):
        return ERROR_MESSAGE
    if any(word in test.lower() for word in _PERFORMANCE_WORDS):
        return PERFORMANCE
    return WRONG_VALUE


def entry_kind(result: JsonObject) -> tuple[str | None, str]:
    """``(kind, why)`` of a harvested entry: the gravest of its confirmed tests' kinds; None for a binary one."""
    kinds, messages = [], {}
    for row in (as_object(r) for r in as_list(result.get("tests"))):
        if row.get("verdict") == CONFIRMED:
            node = str(row.get("node_id", ""))
            messages[node] = str(as_object(row.get("at_parent")).get("message", ""))
            kinds.append((failure_kind(node, messages[node]), node))
    title = str(result.get("title", ""))
    if _ADDS.search(title) and not _FIXES.search(title):
        return FEATURE, "the fix's title says it adds what the parent lacked, and no fix: a feature, not a problem"
    if not kinds:
        return None, "binary: no test failed at the parent on this build, so no failure says its kind"
    kind, node = min(kinds, key=lambda pair: (lacks_new_helper(messages[pair[1]]),
                                              KINDS.index(pair[0])))
    return kind, f"{node} at the parent"
