"""``bisect --explain PROGRAM`` without ``--op``: each op whose state differs between the bounds, bisected on its own.

The program is run on ``--good`` and ``--bad`` (`kit.run.explained`, its
fingerprints kept for the bisects that follow); every (source line, op) that
is whole or gathered on one bound and not on the other gets its own bisect
(``--op FILE:LINE:OP``, the rest of the command line as given), and the answer
is one line per op. Each op's probe of a release reads the one dumped run of
that release (`kit.run.shared_runs`); commit probes run for each op.
"""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path
from typing import Callable, Sequence

from ..log_events import Log
from ..json_types import as_list, as_object, as_text
from ..records import Record
from ..records import Verdict
from ..config import Matrix
from ..check_settings import Check, ExplainedProgram
from ..errors import UsageError
from ..hlo import HOLDS_WHOLE
from ..run import runner
from .report import reports_dir
from .run_spec import run_spec
from .specs import Specs, WhatRuns

Bisect = Callable[[Matrix, Sequence[str], Log], int]


def wanted(specs: Specs) -> bool:
    """Is this a bisect of every changed op (``--explain`` with both bounds and no ``--op``)?"""
    check = specs.runs.script_check
    return bool(check and check.explain is not None and check.explain.op is None
                and specs.search.good and specs.search.bad)


def bisect_each_op(matrix: Matrix, specs: Specs, argv: Sequence[str], log: Log, bisect: Bisect) -> int:
    """Explain both bounds, bisect each op that changed between them, print one line per op."""
    runs, good, bad = specs.runs, specs.search.good, specs.search.bad
    assert runs.script_check is not None and good and bad
    check = dataclasses.replace(runs.script_check, explain=ExplainedProgram(op=""))  # "": every op, kept for theirs
    states = {release: _states(matrix, runs, check, release, log) for release in (good, bad)}
    changed = sorted(op for op in set(states[good]) | set(states[bad])
                     if (states[good].get(op) in HOLDS_WHOLE) != (states[bad].get(op) in HOLDS_WHOLE))
    if not changed:
        raise UsageError(f"no op of {specs.report.script_shown} changes between {good} and {bad}: "
                         "every op is split on both, or whole on both", "nox -s explain -- PROGRAM --releases "
                         f"{good},{bad} shows each op's state")
    log(f"{len(changed)} op(s) change between {good} and {bad}: {', '.join(changed)}; one bisect each")
    answers, code = [], 0
    for op in changed:
        code = max(code, bisect(matrix, [*argv, "--op", op], log))
        answers.append(f"{op}: {_answer(matrix, specs, op)}")
    print("\n".join(["# Per op", *answers]), flush=True)
    return code


def _states(matrix: Matrix, runs: WhatRuns, check: Check, release: str, log: Log) -> dict[str, str]:
    """``FILE:LINE:OP`` → its worst state on ``release``, from one run of the program there."""
    request = runner.RunRequest(check=check.name, version=release, backend=runs.backend, script=check,
                                install=run_spec(matrix, runs).install, echo=False,
                                records_dir=matrix.layout.script_records, timeout_s=runs.timeout, target=runs.target)
    written, _ = runner.run_check(matrix, request, log)
    record = Record(written)
    if not record.ran or record.verdict is Verdict.INCONCLUSIVE and not record.evidence.get("fingerprints"):
        raise UsageError(f"the program did not compile on {release}: {record.reason}",
                         "nox -s explain -- PROGRAM --releases VERSION says why")
    states: dict[str, str] = {}
    for f in map(as_object, as_list(record.evidence.get("fingerprints"))):
        if f.get("location"):
            key, state = f"{f['location']}:{f['op']}", as_text(f["state"])
            states[key] = state if state in HOLDS_WHOLE else states.get(key, state)
    return states


def _answer(matrix: Matrix, specs: Specs, op: str) -> str:
    """The op's bisect report's answer and commit lines, as one line (its bisect is this one with ``--op OP``)."""
    assert specs.runs.script_check is not None
    asked = specs.runs.script_check
    subject = dataclasses.replace(specs.runs, script_check=dataclasses.replace(
        asked, explain=ExplainedProgram(op=op))).subject
    good, bad = specs.search.good, specs.search.bad
    found = sorted(Path(reports_dir(matrix, specs.report)).glob(f"bisect-{subject}-good{good}-bad{bad}-*.json"),
                   key=lambda p: p.stat().st_mtime)
    if not found:
        return "no report was written (see the bisect above)"
    try:
        summary = json.loads(found[-1].read_text(encoding="utf-8")).get("summary") or []
    except (OSError, ValueError):
        return f"its report {found[-1].name} could not be read"
    picked = [line for line in summary if line.startswith(("- **Answer", "- **Commit"))]
    plain = [re.sub(r":? https://\S+", "", re.sub(r"\*\*|`|^- ", "", line)) for line in picked]  # no markdown, no links
    return "; ".join(plain) or "see its report"
