"""How the kit names its own commands to the user: as the front door they came in by.

The same sentences serve two front doors. In the repository a user types
``nox -s bisect -- ...`` or ``python -m kit ...``; from a project folder,
the installed ``jax-kit ...``, where neither nox's sessions nor ``python -m
kit``'s matrix.toml exist. The kit's messages are written once, in the
repository's words; while ``jax-kit`` runs (`AS_JAX_KIT`), `as_spoken`
turns every command they name into ``jax-kit``'s. It is applied where the
words leave the kit: its console (`kit.inert_console`), argparse's usage
lines, the run summary and every ERROR and TIP.
"""

from __future__ import annotations

import contextvars
import re

AS_JAX_KIT = contextvars.ContextVar("AS_JAX_KIT", default=False)
"""True while the ``jax-kit`` command runs (kit/cli.py): usage lines and tips name its commands, not nox's."""

_SESSION = re.compile(r"nox -s (?:(?P<driver>bisect|matrix|report|plan|triage|explain|reduce|audit|known)|(?P<check>[\w-]+?)-"
                      r"(?P<version>VERSION|[0-9]+(?:\.[0-9]+)+))(?: --)?(?=[\s`),;:'\"]|\.\s|\.$|$)")
_MODULE = re.compile(r"python -m kit (?:run (?=[\w-]+ )|(?=bisect|matrix|report|plan|triage|explain|reduce|audit|known|run)\b)")
"""``python -m kit run CHECK ...`` (``jax-kit CHECK ...``) and ``python -m kit COMMAND``."""


def as_spoken(text: str) -> str:
    """``text`` with ``nox -s bisect --`` as ``jax-kit bisect`` (``nox -s CHECK-VERSION --`` as ``jax-kit CHECK
    VERSION``, ``python -m kit run CHECK`` as ``jax-kit CHECK``) while `AS_JAX_KIT` is set; as it is otherwise."""
    if not AS_JAX_KIT.get():
        return text
    text = text.replace("`nox -l`", "`jax-kit --help`")
    text = _MODULE.sub("jax-kit ", text)
    return _SESSION.sub(lambda m: " ".join(filter(None, ("jax-kit", m["driver"], m["check"], m["version"]))), text)
