"""A bug report read once, with nothing run: the block to run and why, the failure, the releases, the ``bad_if``."""

from __future__ import annotations

from dataclasses import dataclass

from ..run.failures import RaisedException
from .block_choice import Choice, choose_block
from .crash_words import CRASH_BAD_IF
from .check_writer import WRONG_VALUE_BAD_IF
from .failure_pattern import bad_if_for
from .issue_text import Block, code_blocks, has_assert, visible_text
from .reported_failure import ReportedFailure, reported_failure
from .reported_versions import Versions, reported_versions


@dataclass(frozen=True)
class Reading:
    blocks: tuple[Block, ...]
    choice: Choice
    failure: ReportedFailure
    versions: Versions
    bad_if: str
    """The pattern the check's failure must match ("" when the report names no failure: any failure is the bug)."""

    def lines(self) -> list[str]:
        """What was read, as the triage prints it before anything runs."""
        out = [f"blocks: {', '.join(f'{b.number} {b.kind}' for b in self.blocks)}; took {self.choice.why}",
               f"reported failure: {self.failure.sentence()}"]
        out.append("releases: " + ("; ".join(self.versions.notes) or "the report names no JAX release"))
        return out


def read_report(text: str, block: int | None = None) -> Reading:
    """Read ``text`` (see kit/triage/*); UsageError when no block can be run or the choice is the user's.

    Only what GitHub shows is read: HTML comments are blanked first (`visible_text`).
    """
    text = visible_text(text)
    blocks = code_blocks(text)
    failure = reported_failure(text, blocks)
    traceback_text = "\n".join(b.text for b in blocks if b.kind in ("traceback", "console")) or text
    choice = choose_block(blocks, traceback_text, block)
    if not failure.chain and failure.wrong_value is None and not failure.crash and has_assert(choice.block.code):
        # "the assertion fails", without its traceback: the block's own assert is the failure it names
        failure = ReportedFailure((RaisedException("AssertionError", ""),),
                                  source=f"the assert in block {choice.block.number}")
    if failure.chain:
        bad_if = bad_if_for(failure.chain)
    elif failure.wrong_value is not None:
        bad_if = WRONG_VALUE_BAD_IF
    elif failure.crash:
        bad_if = CRASH_BAD_IF  # a crash is the bug (--crash bad); an exception is another failure
    else:
        bad_if = ""
    return Reading(tuple(blocks), choice, failure, reported_versions(text, blocks), bad_if)
