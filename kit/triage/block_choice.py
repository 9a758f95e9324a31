"""Which block of a report is the repro, and why; or, when the text cannot say, a question for ``--block N``.

A report holds more blocks than code: the traceback (often labelled
``python``), ``pip install`` lines, ``jax.print_environment_info()`` and its
output. Of the blocks that are Python (`Block.kind`), one that only prints the
environment is not the repro. Of several left, the one that imports jax is
taken; of several that do, the one whose lines the reported traceback shows.
Otherwise the choice is the user's: never a guess.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..errors import UsageError
from .issue_text import Block, imports_jax, only_prints_the_environment

_FRAME = re.compile(r'^\s*File "[^"]*", line \d+')


@dataclass(frozen=True)
class Choice:
    block: Block
    why: str
    """One sentence: which block, and what ruled the others out."""


def choose_block(blocks: list[Block], traceback_text: str, asked: int | None) -> Choice:
    """The block to run (see the module's docstring); UsageError when there is none, or the text cannot decide."""
    if asked is not None:
        return _asked(blocks, asked)
    code = [block for block in blocks if block.kind in ("python", "console") and block.code.strip()]
    environment = [block for block in code if only_prints_the_environment(block.code)]
    candidates = [block for block in code if block not in environment]
    fenced_away = [block for block in blocks if block.fenced_away]
    if not candidates:
        raise UsageError(f"the report holds no block of Python to run ({_listing(blocks)})"
                         + _fenced_away_sentence(fenced_away),
                         "put the repro in a fenced block (```python ... ```), or save it as a script and run "
                         "nox -s bisect -- --script FILE")
    left_out = _named(environment, "only prints the environment") + _named(
        fenced_away, f"fenced as {'/'.join(sorted({b.language for b in fenced_away}))}, not as Python: not run")
    if len(candidates) == 1:
        return Choice(candidates[0], f"block {candidates[0].number}: the only block of Python{left_out}")
    with_jax = [block for block in candidates if imports_jax(block.code)]
    if len(with_jax) == 1:
        others = _named([b for b in candidates if b is not with_jax[0]], "does not import jax")
        return Choice(with_jax[0], f"block {with_jax[0].number}: the only block that imports jax{others}{left_out}")
    shown = [block for block in (with_jax or candidates) if _traceback_shows(block, traceback_text)]
    if len(shown) == 1:
        others = ", ".join(str(b.number) for b in (with_jax or candidates) if b is not shown[0])
        return Choice(shown[0], f"block {shown[0].number}: the traceback shows its lines (not those of block "
                                f"{others}){left_out}")
    several = with_jax or candidates
    raise UsageError(f"the report holds {len(several)} blocks of Python that could be the repro: "
                     + "; ".join(f"block {b.number} ({b.first_line()[:60]!r})" for b in several),
                     f"say which with --block N, e.g. --block {several[-1].number}")


def _asked(blocks: list[Block], asked: int) -> Choice:
    chosen = next((block for block in blocks if block.number == asked), None)
    if chosen is None:
        raise UsageError(f"--block {asked}: the report has {len(blocks)} block{'s' if len(blocks) != 1 else ''}",
                         f"blocks: {_listing(blocks)}")
    if chosen.fenced_away:
        raise UsageError(f"--block {asked} is fenced as {chosen.language}, not as Python: a reader of the report is "
                         "told it is not code, so it is not run",
                         "save the code as a script and run nox -s bisect -- --script FILE, after reading it")
    if chosen.kind not in ("python", "console"):
        raise UsageError(f"--block {asked} is not Python that compiles: it looks like {chosen.kind}",
                         f"blocks: {_listing(blocks)}")
    return Choice(chosen, f"block {asked}: as --block asked")


def _traceback_shows(block: Block, traceback_text: str) -> bool:
    """Does the traceback quote this block's lines? A frame's source line is the line under ``File ..., line N``."""
    lines = traceback_text.splitlines()
    quoted = {lines[at + 1].strip() for at, line in enumerate(lines[:-1])
              if _FRAME.match(line) and lines[at + 1].startswith("    ")}
    quoted = {line for line in quoted if line and not set(line) <= set("^~ ")}
    code = {line.strip() for line in block.code.splitlines()}
    return bool(quoted & code)


def _fenced_away_sentence(blocks: list[Block]) -> str:
    if not blocks:
        return ""
    return (f"; block{'s' if len(blocks) > 1 else ''} {', '.join(str(b.number) for b in blocks)} hold"
            f"{'' if len(blocks) > 1 else 's'} code fenced as another language, which is not run")


def _named(blocks: list[Block], what: str) -> str:
    if not blocks:
        return ""
    numbers = ", ".join(str(block.number) for block in blocks)
    return f" (block{'s' if len(blocks) > 1 else ''} {numbers} {what})"


def _listing(blocks: list[Block]) -> str:
    return ", ".join(f"block {block.number}: {block.kind}" for block in blocks) or "no fenced blocks"
