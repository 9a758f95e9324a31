"""Triage's runs judged by the check it wrote: what the bisect that follows takes for those releases.

Triage runs a *capture* of the report's block (reports/triage/captures/NAME.py:
the block and the outcome it keeps, kit/triage/block_outcome.py) and writes the
check (checks/NAME.py) afterwards: the same block and capture, plus the
references it judges by, which only exist once both runs are in. So the check
itself never ran on those releases, and a probe of it is not what ran there.

What is true, and what is handed on: the capture ran on release V in an install
whose identity its record holds, and its outcome, judged by the check's own
judge (`block_outcome.judgement`, the code the check carries, with the check's
references), gives the verdict the check would give that outcome. The bisect
(kit/bisect/probe/given.py) takes such a run for release V only where its own
probe would run in the same install (packages, Python, hardware, JAX/XLA
variables) and only for the check it was judged for; it says where the verdict
came from, never keeps it in the probe cache as a probe of the check, and a
pasted bisect command probes those releases itself.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

from ..config import script_parameters

from ..check_settings import bad_if_pattern, script_check
from ..json_types import JsonObject, json_form
from ..records import Record
from ..records import Verdict
from ..run.failures import script_probe_subject
from ..user_paths import report_path
from . import block_outcome
from .check_writer import BEHAVES_AS_REPORTED, Judged
from .difference import Run

VERDICTS = {1: Verdict.AFFECTED, 0: Verdict.UNAFFECTED, 125: Verdict.INCONCLUSIVE}
"""The check's exit code as the kit reads a script's (kit/run/protocol.py): 1 with its bad_if line is bad."""


@dataclass(frozen=True)
class JudgedRun:
    """One triage run and the verdict the check's judge gives its outcome."""

    version: str
    record: Record
    """The capture run's record, as the runner wrote it: its identity says what ran, on which install."""
    judged_by: JsonObject
    """The check whose judge gave the verdict, as a bisect's ``--script`` probe names what it runs (its sha256,
    host devices and bad_if: `kit.bisect.run_spec.RunSpec.subject`)."""
    verdict: str
    reason: str
    """The line the check prints on that outcome, said as the judge's."""
    ran: str
    """What ran where, and how to reproduce it, in words (for the bisect's report)."""
    log: str
    """The run's whole output, relative to the project."""


def check_subject(check: Path, bad_if: str, devices: int | None, project: Path) -> JsonObject:
    """What a bisect's probe of ``--script CHECK --bad-if BAD_IF [--host-devices N]`` runs, as its identity holds it:
    the script's parameters less its path (kit.config.script_parameters, as `kit.bisect.probe.cache` keys them)."""
    as_check = script_check(check.stem, check, host_devices=devices, bad_if=bad_if_pattern(bad_if, "bad_if"))
    return json_form(script_probe_subject(script_parameters(as_check, project)))


def judged_runs(runs: dict[str, Run], judged: Judged, check: Path, bad_if: str, devices: int | None,
                project: Path) -> list[JudgedRun]:
    """Each run that kept an outcome and a record, judged by the check's judge; runs that could not speak for the
    block (not installable, timed out, JAX itself could not run) are left to the bisect to probe, and so are runs a
    signal killed: the check's judge never saw a crash, which the bisect counts as ``--crash`` says."""
    subject = check_subject(check, bad_if, devices, project)
    shown_check = report_path(check, project)
    out = []
    for version, run in runs.items():
        if run.outcome is None or run.record is None or not isinstance(run.record.get("identity"), dict) \
                or block_outcome.is_crash(run.outcome):
            continue
        code, said = block_outcome.judgement(run.outcome, judged.bad, judged.good, list(judged.features),
                                             (judged.bad_release, judged.good_release), BEHAVES_AS_REPORTED)
        out.append(JudgedRun(version, Record.of(run.record), subject, VERDICTS[code], f"the check's judge on triage's run: {said}",
                             _what_ran(run, shown_check, check), run.log))
    return out


def _what_ran(run: Run, shown_check: str, check: Path) -> str:
    """One sentence: the script that ran (path, sha256), the record, the judge, and the command that reruns it."""
    assert run.record is not None
    parameters = Record.of(run.record).parameters
    script, sha = str(parameters.get("script") or "?"), str(parameters.get("script_sha256") or "?")
    judge_sha = hashlib.sha256(check.read_bytes()).hexdigest()
    reproduce = str(run.record.get("reproduce") or "")
    return (f"triage ran {script} (sha256 {sha[:12]}: the check's block and outcome capture, without its judge) "
            f"on jax {run.version}; record {run.record_path or '?'}; its outcome judged afterwards by the judge of "
            f"{shown_check} (sha256 {judge_sha[:12]})" + (f"; reproduce: {reproduce}" if reproduce else ""))
