"""One candidate run on one release: the program's file written, run in a warm worker, and what it did read.

What it did is triage's outcome (kit/triage/block_outcome.py: the exit, the exception, each printed line
with its numbers parsed) and, with ``--op``, explain's fingerprints of what it compiled (the dump read by
`kit.run.explained.read_dump`, as an explained run's is).
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from ..hlo import Fingerprint
from ..records import RunOutcome, Status
from ..run.explained import read_dump
from ..run.hlo_dump import Dump, dump_flags
from ..run.shared_runs import DumpedRun
import kit.triage.block_outcome as block_outcome  # the foundation's reader of outcomes (tests/test_layers.py)
from .program import Program
from .workers import Pool


@dataclass
class Seen:
    """What one release's run of a candidate did."""

    release: str
    outcome: block_outcome.BlockOutcome
    stdout: str
    stderr: str
    seconds: float
    timed_out: bool = False
    fingerprints: list[Fingerprint] = field(default_factory=list)

    def said(self, lines: int = 12) -> str:
        """The run's output as a person saw it: stdout, then stderr's last lines."""
        shown = self.stdout.rstrip().splitlines()[-lines:]
        errors = [line for line in self.stderr.rstrip().splitlines() if line.strip()][-lines:]
        return "\n".join(shown + errors)


def run_candidate(pool: Pool, release: str, program: Program, name: str, scratch: Path, timeout: int,
                  dump: bool) -> Seen:
    """``program`` as ``name`` in a folder of its own under ``scratch``, run on ``release``; the folder removed."""
    # A folder of its own per run: two variants of one batch may be the same text, run at once.
    folder = Path(tempfile.mkdtemp(prefix=f"{release}-{program.digest[:12]}-", dir=scratch))
    script = folder / name
    script.write_text(program.text, encoding="utf-8")
    env: dict[str, str] = {}
    if dump:
        flags = dump_flags(folder / "dump", "")
        env = {"KIT_XLA_DUMP_FLAGS": flags, "XLA_FLAGS": flags}
    try:
        ended = pool.run(release, script, timeout, env)
        stdout, stderr = _text(folder / "stdout.txt"), _text(folder / "stderr.txt")
        outcome = block_outcome.outcome(ended.exit if ended.exit is not None else -9, stdout)
        outcome["exception"] = _raised(folder / "raised.json")
        seen = Seen(release, outcome, stdout, stderr, ended.seconds, ended.timed_out)
        if dump:
            seen.fingerprints = _fingerprints(folder)
        return seen
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _text(path: Path, limit: int = 1 << 20) -> str:
    try:
        with open(path, "rb") as handle:
            handle.seek(max(0, os.path.getsize(path) - limit))
            return handle.read().decode("utf-8", "replace")
    except OSError:
        return ""


def _raised(path: Path) -> block_outcome.BlockException | None:
    try:
        said: object = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(said, dict):
        return None
    kind, text = str(said.get("type", "")), str(said.get("text", ""))
    return {"type": kind, "message": block_outcome.masked(text)[0], "text": text}


def _fingerprints(folder: Path) -> list[Fingerprint]:
    run = DumpedRun(RunOutcome(Status.RAN))
    with Dump(folder / "dump") as dump:
        pass  # the program has ended: one prune, then read
    read_dump(dump, run, lambda path: os.path.basename(path))
    return run.fingerprints
