"""A ``bad_if`` from a reported exception that matches the same failure on other releases and overlays.

The reporter's exception line holds values that differ from run to run and
release to release: object addresses (``at 0x7f3a...``), ids and generated
names (``'jit__lambda_12'``), shapes and avals (``(3, 4)``, ``f32[3,4]``,
``ShapedArray(float32[3])``), tracer levels (``level=1/0``). Those become
wildcards, and so do computed floats (``0.1234567``: the reporter's machine writes other low
digits, so a literal would never match here); the words around them stay literal, and so do quoted names
without digits (``'f'``, ``'squareplus'``) but for a class's module prefix: ``'GetAttrKey'`` also matches
``'jaxlib._jax.pytree.GetAttrKey'`` (CPython >= 3.12 qualifies a C extension type's name). Only the
message's first line is used (JAX appends notes and links that change between releases), cut at a word near
`MESSAGE_CHARS`. The exception's module path differs too
(``jax.errors.X``, ``jax._src.errors.X``, ``X``): any prefix matches.

The pattern is anchored at a line's start (``(?m)^``), so it matches a link of
the chain `kit.run.failures` searches, and the same line in the output. A
chain (``raise ... from``) gives one alternative per link: the failure can end
in another link on another build (docs/checks.md).
"""

from __future__ import annotations

import re

from ..run.failures import RaisedException
from .block_outcome import repr_spans

MESSAGE_CHARS = 160
"""How much of the message's first line the pattern keeps: enough to tell failures apart, short of release notes."""

# Each (pattern, wildcard), applied to the message before it is escaped; first match wins at each position.
_VARYING: list[tuple[str, str]] = [
    (r"0x[0-9a-fA-F]+", r"0x[0-9a-fA-F]+"),  # addresses
    # a computed float (an assert quoting the reporter's values): another machine writes other low digits
    (r"(?<![\w.])[-+]?\d+\.\d+(?:[eE][-+]?\d+)?(?![\w])", r"[-+]?[\d.]+(?:[eE][-+]?\d+)?"),
    (r"~?\b[a-z]+\d*\[[\d, ]*\]", r"~?\w+\[[^\]]*\]"),  # avals and HLO shapes: f32[3,4], float32[], ~int32[]
    (r"(?<![\w)\]])\((?:\d+, ?)*\d*,?\)", r"\([^)]*\)"),  # shapes: (3, 4), (7,), (); not a call's ()
    (r"\[(?:\d+, ?)+\d+\]", r"\[[^\]]*\]"),  # a shape written as a list: [3, 4]
    (r"'[^'\n]*\d[^'\n]*'", r"'[^']*'"),  # a quoted value holding a digit: an id, a generated name, a shape
    (r'"[^"\n]*\d[^"\n]*"', r'"[^"]*"'),
    (r"<[^<>\n]*\b(?:at|object at)\b[^<>\n]*>", r"<[^>]*>"),  # <function f at 0x...>, <object at ...>
    # a quoted (dotted) name: CPython >= 3.12 writes a C extension's type by its module too ('GetAttrKey' on 3.11,
    # 'jaxlib._jax.pytree.GetAttrKey' on 3.13): matched by its last component, any prefix (`_quoted_name`)
    (r"'(?:[A-Za-z_]\w*\.)*[A-Z]\w*'", ""),  # a class's CapWords name, dotted or not (not 'model.py')
    (r"level=\d+/\d+", r"level=\d+/\d+"),  # a tracer's trace level
    (r"\bline \d+", r"line \d+"),
]
_VARYING_RE = re.compile("|".join(f"({pattern})" for pattern, _ in _VARYING))


def bad_if_for(chain: tuple[RaisedException, ...] | list[RaisedException]) -> str:
    """``(?m)^(?:[\\w.]+\\.)?Type: message`` for the exception (each link of its chain an alternative)."""
    if not chain:
        raise ValueError("no exception to match")
    links = list(dict.fromkeys(link_pattern(link) for link in chain))
    return "(?m)^" + (links[0] if len(links) == 1 else "(?:" + "|".join(links) + ")")


def link_pattern(raised: RaisedException) -> str:
    """One exception as a pattern: any module prefix, its class name, the robust first line of its message."""
    kind = r"(?:[\w.]+\.)?" + re.escape(raised.name)
    first = next((line.strip() for line in raised.message.splitlines() if line.strip()), "")
    if not first:
        return kind + r"(?::|$)"
    return kind + ": " + message_pattern(_cut(first))


REPR_WILDCARD = ".+?"
"""What an object's repr in the message becomes: any text up to the words that follow it. A tracer is written
four ways from jax 0.4.36 to 0.10.0 (``Traced<ShapedArray(int32[], weak_type=True)>with<DynamicJaxprTrace>``,
``Traced<~int32[]>with<DynamicJaxprTrace>``, ``JitTracer<~int32[]>``, ``JitTracer(~int32[])``); a pattern that
kept the reporter's form matched one era only, and a bisect skipped the others as another failure."""


def message_pattern(message: str) -> str:
    """The message with every varying value a wildcard (object reprs: `kit.triage.block_outcome.repr_spans`) and
    everything else literal."""
    parts, at = [], 0
    for start, end in repr_spans(message):
        parts += [_values_pattern(message[at:start]), REPR_WILDCARD]
        at = end
    return "".join(parts) + _values_pattern(message[at:])


def _values_pattern(message: str) -> str:
    parts, at = [], 0
    for found in _VARYING_RE.finditer(message):
        parts.append(_literal(message[at:found.start()]))
        wildcard = _VARYING[found.lastindex - 1][1] if found.lastindex else ""
        parts.append(wildcard or _quoted_name(found.group(0)))
        at = found.end()
    parts.append(_literal(message[at:]))
    return "".join(parts)


def _quoted_name(quoted: str) -> str:
    """``'a.b.Name'`` (or ``'Name'``) as a pattern: the last component literal, any dotted prefix inside the quotes."""
    return "'" + r"(?:[\w.]+\.)?" + _literal(quoted.strip("'").rsplit(".", 1)[-1]) + "'"


def _literal(text: str) -> str:
    """``re.escape``, but spaces stay spaces: the pattern is printed, pasted and read by people."""
    return re.escape(text).replace("\\ ", " ")


def _cut(message: str) -> str:
    """At most `MESSAGE_CHARS`, cut at a space so no value is cut in half (the pattern then matches a prefix)."""
    if len(message) <= MESSAGE_CHARS:
        return message
    return message[:MESSAGE_CHARS].rsplit(" ", 1)[0]
