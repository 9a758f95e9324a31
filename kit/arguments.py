"""The kit's command-line parsers: a mistake on the command line is one ERROR sentence and a TIP.

argparse prints its usage and exits 2 on a bad option; the kit's commands
say what was wrong in one sentence, where the rest of its errors are said
(`kit.errors.UsageError`, rendered at the boundary), and name where the
options are described.
"""

from __future__ import annotations

import argparse
import contextvars
import re
from typing import Any, NoReturn

from .errors import UsageError

AS_JAX_KIT = contextvars.ContextVar("AS_JAX_KIT", default=False)
"""True while the ``jax-kit`` command runs (kit/cli.py): usage lines and tips name its commands, not nox's."""

_SESSION = re.compile(r"nox -s (?:(?P<driver>bisect|matrix|report|plan|triage)|(?P<check>[\w-]+?)-"
                      r"(?P<version>VERSION|[0-9]+(?:\.[0-9]+)+))(?: --)?(?=[\s`),;:'\"]|\.\s|\.$|$)")


def as_spoken(text: str) -> str:
    """``text`` with ``nox -s bisect --`` as ``jax-kit bisect`` (``nox -s CHECK-VERSION --`` as
    ``jax-kit CHECK VERSION``) while `AS_JAX_KIT` is set; as it is otherwise."""
    if not AS_JAX_KIT.get():
        return text
    text = text.replace("`nox -l`", "`jax-kit --help`")
    return _SESSION.sub(lambda m: " ".join(filter(None, ("jax-kit", m["driver"], m["check"], m["version"]))), text)


class Parser(argparse.ArgumentParser):
    """An `argparse.ArgumentParser` whose errors are `UsageError`s with ``tip``."""

    def __init__(self, *args: Any, tip: str, **kwargs: Any) -> None:
        for said in ("prog", "usage", "description", "epilog"):
            if isinstance(kwargs.get(said), str):
                kwargs[said] = as_spoken(kwargs[said])
        super().__init__(*args, **kwargs)
        self.tip = as_spoken(tip)

    def error(self, message: str) -> NoReturn:  # one sentence, no usage dump
        raise UsageError(message, self.tip)
