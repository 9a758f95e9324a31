"""The kit's command-line parsers: a mistake on the command line is one ERROR sentence and a TIP.

argparse prints its usage and exits 2 on a bad option; the kit's commands
say what was wrong in one sentence, where the rest of its errors are said
(`kit.errors.UsageError`, rendered at the boundary), and name where the
options are described, in the words of the front door in use (`kit.wording`).
"""

from __future__ import annotations

import argparse
import difflib
from typing import NoReturn, Sequence

from .errors import UsageError
from .wording import as_spoken


class Parser(argparse.ArgumentParser):
    """An `argparse.ArgumentParser` whose errors are `UsageError`s with ``tip``."""

    def __init__(self, prog: str | None = None, usage: str | None = None, description: str | None = None,
                 epilog: str | None = None, *, tip: str,
                 formatter_class: type[argparse.HelpFormatter] = argparse.HelpFormatter, add_help: bool = True,
                 allow_abbrev: bool = True) -> None:
        """The kit's words in ``prog``, ``usage``, ``description`` and ``epilog`` said as the command in use
        (`as_spoken`); the rest as `argparse.ArgumentParser` takes it."""
        super().__init__(prog=_spoken(prog), usage=_spoken(usage), description=_spoken(description),
                         epilog=_spoken(epilog), formatter_class=formatter_class, add_help=add_help,
                         allow_abbrev=allow_abbrev)
        self.tip = as_spoken(tip)

    def error(self, message: str) -> NoReturn:  # one sentence, no usage dump
        raise UsageError(message + self._nearest(message), self.tip)

    def _nearest(self, message: str) -> str:
        """``; did you mean --releases?`` for an unknown ``--relases``: the typo named with the option it missed."""
        if not message.startswith("unrecognized arguments: "):
            return ""
        options = [o for o in self._option_string_actions if o.startswith("--")]
        for word in message[len("unrecognized arguments: "):].split():
            near = difflib.get_close_matches(word.split("=", 1)[0], options, n=1, cutoff=0.75)
            if word.startswith("--") and near:
                return f"; did you mean {near[0]}?"
        return ""


def _spoken(text: str | None) -> str | None:
    return as_spoken(text) if text is not None else None


def asks_help(argv: Sequence[str]) -> bool:
    """Whether the command's first word is ``-h`` or ``--help``, once the ``--called-from DIR`` its nox session
    puts first (explain's and reduce's) is set aside: README's ``nox -s explain -- --help`` said "explain needs a
    program (not '--help')"."""
    words = list(argv[2:] if argv[:1] == ["--called-from"] else argv)
    return words[:1] in (["-h"], ["--help"])
