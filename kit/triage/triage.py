"""From a bug report to an answer: a check written from its text, run where it was reported and on the newest
release, and the bisect that finds where it changed (run by the command line with ``--run``).

`triage` reads the report (kit/triage/report_reading.py), writes
``checks/<name>.py`` (kit/triage/check_writer.py), runs it through the kit's
one runner on the reporter's release and on the newest one (records under
``reports/triage/records/``, not the matrix's), and says which it reproduces
on. `bisect_plan` turns that into the bisect's bounds:

* reproduced where reported and the report names a release that worked:
  ``--good THAT --bad REPORTED`` (what broke it);
* else reproduced where reported but not on the newest: ``--bad REPORTED
  --good NEWEST`` (what fixed it);
* reproduced on both and no release named good: no bisect; it says to name one;
* not reproduced where reported: no bisect, and why.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from ..config import Matrix, bad_if_pattern, script_check
from ..errors import IndexUnreachable
from ..install.index import PackageIndex
from ..install.release import open_index
from ..project import bisect_command
from ..run.runner import RunRequest, run_check
from ..user_paths import shown_path
from .check_writer import WRITTEN_BY, WrittenCheck, check_name, check_text, write_check
from .report_reading import Reading, read_report

Log = Callable[[str], None]


@dataclass(frozen=True)
class TriageOptions:
    source: str
    """How the report is named: a path relative to the project, or ``OWNER/REPO#N``."""
    text: str
    block: int | None = None
    name: str = ""
    checks_dir: Path | None = None
    """Where the check is written (default: ``checks/`` beside matrix.toml)."""
    reported: str = ""
    """The release to run as the reporter's (default: what the report says)."""
    good: str = ""
    """A release known to work (default: what the report says)."""
    newest: str = ""
    """The newest release to compare with (default: the newest on the index)."""
    commits: bool = False
    jax_repo: Path | None = None
    reproduce: str = ""


@dataclass
class Triage:
    reading: Reading
    check: WrittenCheck
    verdicts: dict[str, str] = field(default_factory=dict)
    """Per release run: the verdict (or status) and its reason, in words."""
    bisect_argv: list[str] = field(default_factory=list)
    answer: str = ""
    other_command: list[str] = field(default_factory=list)
    """A second bisect worth running (what fixed it, when the first finds what broke it)."""
    command: str = "nox -s bisect --"  # how a bisect command begins here (`kit.project.bisect_command`)


def triage(matrix: Matrix, options: TriageOptions, log: Log, index: PackageIndex | None = None) -> Triage:
    """Read, write, run on the reporter's release and the newest, and plan the bisect (see the module's docstring)."""
    reading = read_report(options.text, options.block)
    for line in reading.lines():
        log(line)
    name = options.name or check_name(options.source)
    folder = options.checks_dir or matrix.path.parent / "checks"
    header = f"Triage check for {options.source}, {WRITTEN_BY} (kit/triage/)."
    written = write_check(folder, name, check_text(reading.choice.block, reading.failure, reading.bad_if, header),
                          reading.bad_if)
    log(f"wrote {shown_path(written.path, matrix.path.parent)}")
    result = Triage(reading, written, command=bisect_command(matrix))
    reported = options.reported or reading.versions.reported
    newest = options.newest or newest_release(matrix, index, log)
    outcomes = {}
    for version in dict.fromkeys(v for v in (reported, newest) if v):
        outcomes[version] = run_on(matrix, options, written, name, version, log)
        result.verdicts[version] = outcomes[version]["sentence"]
    plan_bisect(result, matrix, options, reported, newest, {v: o["verdict"] for v, o in outcomes.items()})
    return result


def run_on(matrix: Matrix, options: TriageOptions, written: WrittenCheck, name: str, version: str,
           log: Log) -> dict[str, Any]:
    """The check on one release, through the kit's runner; its record kept in ``reports/triage/records/``."""
    check = script_check(name, written.path, bad_if=bad_if_pattern(written.bad_if, "bad_if") if written.bad_if else None)
    request = RunRequest(check=name, version=version, script=check, reproduce=options.reproduce,
                         records_dir=matrix.layout.triage_records)
    log(f"running {name} on jax {version}")
    record, _ = run_check(matrix, request, log)
    verdict = str(record.get("verdict") or record.get("status"))
    return {"verdict": verdict, "sentence": f"{verdict.upper()}: {record.get('reason')}"}


def newest_release(matrix: Matrix, index: PackageIndex | None, log: Log) -> str:
    """The newest JAX on the index; matrix.toml's newest [[release]] when the index cannot be reached."""
    try:
        return str((index or open_index(matrix)).jax_releases()[-1])
    except IndexUnreachable as error:
        fallback = max(matrix.releases, key=lambda release: release.key).version if matrix.releases else ""
        log(f"{error}; comparing with matrix.toml's newest release, {fallback or 'none'}, instead")
        return fallback


def plan_bisect(result: Triage, matrix: Matrix, options: TriageOptions, reported: str, newest: str,
                verdicts: dict[str, str]) -> None:
    """The answer in one sentence and the bisect's arguments (empty when there is nothing to bisect)."""
    good = options.good or result.reading.versions.last_good
    on_reported, on_newest = verdicts.get(reported, ""), verdicts.get(newest, "")
    if not reported:
        result.answer = (f"the report names no release it ran; on the newest, {newest}, the check is {on_newest}. "
                         "Say which release reproduced it with --reported VERSION")
        if on_newest == "affected" and good:
            result.bisect_argv = bisect_argv(result, matrix, options, good=good, bad=newest)
        return
    if on_reported != "affected":
        result.answer = (f"not reproduced on the reporter's release {reported} ({on_reported}): "
                         f"{result.verdicts.get(reported, '')}")
        return
    fixed = on_newest == "unaffected" and newest != reported
    state = (f"fixed by the newest release, {newest}" if fixed else
             f"still there in the newest release, {newest}" if on_newest == "affected" else
             f"{on_newest} on the newest release, {newest}")
    result.answer = f"reproduced on the reporter's release {reported}; {state}"
    fix = bisect_argv(result, matrix, options, good=newest, bad=reported) if fixed else []
    if good:
        result.bisect_argv, result.other_command = bisect_argv(result, matrix, options, good=good, bad=reported), fix
    elif fixed:
        result.bisect_argv = fix
    elif on_newest == "affected":
        # No release known to work: the bisect gallops back from the newest to find one (--bad alone).
        result.answer += "; the bisect looks for a release where it worked, going back from the newest"
        result.bisect_argv = bisect_argv(result, matrix, options, good=None, bad=newest)


def bisect_argv(result: Triage, matrix: Matrix, options: TriageOptions, good: str | None, bad: str) -> list[str]:
    """``nox -s bisect -- ...``'s arguments for this check (a path relative to the project, as printed).

    Without ``good`` only ``--bad`` is given, and the bisect gallops to find a good release.
    """
    argv = ["--script", shown_path(result.check.path, matrix.path.parent)]
    if result.check.bad_if:
        argv += ["--bad-if", result.check.bad_if]
    argv += (["--good", good] if good else []) + ["--bad", bad]
    if options.commits:
        argv.append("--commits")
        if options.jax_repo is not None:
            argv += ["--jax-repo", str(options.jax_repo)]
    return argv


def command(argv: list[str], begins: str = "nox -s bisect --") -> str:
    return f"{begins} {shlex.join(argv)}"


def answer_lines(result: Triage) -> list[str]:
    """What the triage prints last: what ran where, the answer, and the command to run next."""
    lines = [f"== triage: {result.answer}"]
    lines += [f"   jax {version}: {sentence}" for version, sentence in result.verdicts.items()]
    lines.append(f"   check: {result.check.path.name}" + (f" (bad_if {result.check.bad_if})" if result.check.bad_if else ""))
    if result.bisect_argv:
        lines.append(f"   next: {command(result.bisect_argv, result.command)}")
    if result.other_command:
        lines.append(f"   and what fixed it: {command(result.other_command, result.command)}")
    return [re.sub(r"\s+$", "", line) for line in lines]
