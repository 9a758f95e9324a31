"""The command line a record or a report says to paste: every word quoted, and no path of this machine's.

A reproduce line is pasted into a shell by someone else, often in a bug
thread. So each word is shell-quoted (``python -m kit explain`` once wrote a
program's arguments as they came, and pasting ``$(...)`` ran it), and each
absolute path is written as the reader can use it: relative inside the
project, ``~/...`` under the home folder (the ``~`` left unquoted, so the
shell expands it), and otherwise a placeholder named for its option
(``--script <SCRIPT>``), never ``../../../`` climbing out of the project.
A path the user gave relative is kept as they gave it.

A JAX clone (``--jax-repo``) elsewhere is kept as the user gave it, quoted: a
reproduce line must be a command that runs (issue 58), and the placeholder
``'<JAX_REPO>'`` made ``--commits`` refuse it; left out, the kit would clone
JAX from GitHub instead, which a machine that reaches only package indexes
cannot. The report's prose names that clone already (relative to the project).
"""

from __future__ import annotations

import os
import shlex
from pathlib import Path
from typing import Sequence

from .user_paths import shown_path

PATH_FLAGS = frozenset({"--script", "--explain", "--changelog", "--jax-repo", "--out", "--find-links", "--results",
                        "--python", "--config"})
"""The options whose value is a path, in every command (``--find-links`` may be a URL, left as it is)."""


def reproduce_argv(argv: Sequence[str], project: Path) -> list[str]:
    """``argv`` with each absolute path (a path option's value, or a word naming a file of this machine) shown as
    the reader can use it: relative in ``project``, ``~/...`` under home, else ``<FLAG>``; other words as given."""
    shown: list[str] = []
    for word in argv:
        flag, equals, value = word.partition("=") if word.startswith("--") and "=" in word else ("", "", word)
        option = flag if equals else (shown[-1] if shown and shown[-1] in PATH_FLAGS else "")
        if value.startswith(("/", "~")) and (option in PATH_FLAGS or os.path.lexists(os.path.expanduser(value))):
            value = _shown(value, project, option)
        shown.append(flag + equals + value)
    return shown


KEPT_AS_GIVEN = frozenset({"--jax-repo"})
"""Path options kept as the user gave them when outside the project and home (see the module's docstring)."""


def _shown(value: str, project: Path, option: str) -> str:
    path = Path(value).expanduser()
    shown = shown_path(path, project)
    if not os.path.isabs(shown):
        return shown
    if option in KEPT_AS_GIVEN:
        return value
    return f"<{option.lstrip('-').replace('-', '_').upper() or 'PATH'}>"


def shell_join(words: Sequence[str]) -> str:
    """``shlex.join``, but a word starting ``~/`` keeps its ``~`` outside the quotes, so the shell expands it."""
    return " ".join("~/" + shlex.quote(word[2:]) if word.startswith("~/") and len(word) > 2 else shlex.quote(word)
                    for word in words)


def reproduce_command(command: str, argv: Sequence[str], project: Path) -> str:
    """``command`` (``python -m kit explain``, already a shell's words) followed by ``argv`` as a reproduce line."""
    return f"{command} {shell_join(reproduce_argv(argv, project))}".rstrip()


def reproduce_text(line: str, project: Path) -> str:
    """A whole command line given as text (``nox -s explain -- ...``, ``jax-kit ...``), made a reproduce line."""
    try:
        words = shlex.split(line)
    except ValueError:  # an unbalanced quote: the line cannot be split into words, so it is quoted whole
        return shlex.quote(line)
    return shell_join(reproduce_argv(words, project))
