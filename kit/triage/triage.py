"""From a bug report to an answer: the report's block run where it was reported and on the newest release, a
check written from where the runs differ, and the bisect that finds where it changed (run by the command line
with ``--run``).

`triage` reads the report (kit/triage/report_reading.py), runs a capture of
its block (``reports/triage/captures/<name>.py``) through the kit's one runner
on the reporter's release and on the newest one (records under
``reports/triage/records/``, not the matrix's), writes ``checks/<name>.py``
from the difference (kit/triage/check_writer.py), and judges its runs with that
check's judge (kit/triage/judged_runs.py: the bisect's probes of those
releases). `plan_bisect` turns the verdicts into the bisect's bounds:

* reproduced where reported and the report names a release that worked:
  ``--good THAT --bad REPORTED`` (what broke it);
* else reproduced where reported but not on the newest: ``--bad REPORTED
  --good NEWEST`` (what fixed it);
* reproduced on both and no release named good: ``--bad NEWEST`` alone;
* reproduced where reported, the newest inconclusive: toward the release that
  worked, else ``--bad REPORTED`` alone, with why;
* not reproduced where reported: no bisect, and why.
"""

from __future__ import annotations

import math
import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from ..log_events import Log
from ..records import Verdict
from ..config import Matrix
from ..check_settings import DEFAULT_TIMEOUT_S, bad_if_pattern, script_check
from ..errors import IndexUnreachable
from ..install import open_index, PackageIndex
from ..config import bisect_command, catalogue_folders
from ..run.runner import RunRequest, run_check
from ..reproduce_line import reproduce_argv
from ..user_paths import report_path
from .crash_words import crash_counts, crash_reason
from .check_writer import (
    DIFFERENCE_BAD_IF,
    WRITTEN_BY,
    Judged,
    WrittenCheck,
    check_name,
    check_text,
    outcome_check_text,
    refuse_foreign,
    write_check,
)
from . import block_outcome
from .block_outcome import Feature
from .difference import (Difference, Run, captured, chain_shows_reported, confirmation, difference, feature_name,
                         shows_reported)
from .judged_runs import JudgedRun, judged_runs
from .known_match import known_lines
from .progress import still_running
from .report_reading import Reading, read_report


@dataclass(frozen=True)
class TriageOptions:
    source: str
    """How the report is named: a path relative to the project, or ``OWNER/REPO#N``."""
    text: str
    key: str = ""
    """What tells the report from another of the same name (kit/triage/issue_source.IssueText.key)."""
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
    host_devices: int | None = None
    """CPU runs get this many forced host devices (default: the number the report's code asks for)."""
    verbose: bool = False
    """Show the runs' output (the block's traceback) on the console too, not only in their logs."""
    timeout_s: int = DEFAULT_TIMEOUT_S
    """Each run of the block is stopped after this long (``--timeout``); the bisect it proposes gets the same."""


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
    command: str = "nox -s bisect --"  # how a bisect command begins here (`kit.config.bisect_command`)
    details: list[str] = field(default_factory=list)
    """What the answer rests on: the difference the check judges, the report's confirmation, what to try next."""
    host_devices: int | None = None
    judged: Judged | None = None
    """The references a check written by difference judges by (None for a check of the reported failure)."""
    judged_runs: list[JudgedRun] = field(default_factory=list)
    """Triage's runs judged by that check (kit/triage/judged_runs.py): with ``--run``, the bisect's probes of them."""
    crash: str = ""
    """Why the report is a crash (kit/triage/crash_words.py), or "": then the bisect takes ``--crash bad``."""


def triage(matrix: Matrix, options: TriageOptions, log: Log, index: PackageIndex | None = None) -> Triage:
    """Read, run the block on the reporter's release and the newest, write the check from where they differ, and
    plan the bisect (see the module's docstring)."""
    reading = read_report(options.text, options.block)
    for line in reading.lines():
        log(line)
    name = options.name or check_name(options.source, options.key)
    folder = options.checks_dir or matrix.path.parent / "checks"
    reported = options.reported or reading.versions.reported
    worked = options.good or reading.versions.last_good
    newest = options.newest or newest_release(matrix, index, log)
    first = reported or worked  # the release the bug was seen on, else the one the report says worked
    devices = options.host_devices or devices_asked(reading.choice.block.code)
    refuse_foreign(folder / f"{name}.py")  # before anything runs: a check of the user's there is never replaced
    # The capture is a file of its own, kept at the path its runs' records name: the check, written once the runs
    # are in, is that capture plus the references it judges by (kit/triage/judged_runs.py).
    capture = write_check(captures_folder(matrix), name, outcome_check_text(reading.choice.block, _header(options), [
        "Capturing: runs the block and keeps what it did (the triage then writes the check that judges)."], None), "")
    releases = [v for v in dict.fromkeys((first, newest)) if v]
    log(f"wrote {report_path(capture.path, matrix.path.parent)}; "
        + announcement(reading, options.source, releases, devices))
    runs = {}
    for version in releases:
        runs[version] = run_on(matrix, options, capture, name, version, devices, log)
        log(f"jax {version}: {runs[version].summary()}")
    result = Triage(reading, WrittenCheck(folder / f"{name}.py", ""), host_devices=devices,
                    command=bisect_command(matrix))

    def run_more(version: str, keep: bool = True) -> Run:
        again = run_on(matrix, options, capture, name, version, devices, log)
        if keep:  # a repeat for noise is said only where it finds some (the details' "noise" line)
            log(f"jax {version}: {again.summary()}")
            runs[version] = again
        return again

    result.crash = crash_reason(reading.failure.crash, {version: run.outcome for version, run in runs.items()})
    decide(result, matrix, options, runs, Releases(reported, worked, newest), run_more)
    if result.crash:
        result.details.insert(0, f"a crash: {result.crash}; {crash_counts(result.crash, bool(result.bisect_argv))}")
    result.details += known_lines(catalogue_folders(matrix), result.judged)  # the catalogue's entries it matches
    if result.judged is not None:
        result.judged_runs = judged_runs(runs, result.judged, result.check.path, result.check.bad_if, devices,
                                         matrix.path.parent)
    return result


def captures_folder(matrix: Matrix) -> Path:
    """Where the capture that triage runs is kept (reports/triage/captures/): its records name it there."""
    return matrix.layout.triage_records.parent / "captures"


def _header(options: TriageOptions) -> str:
    return f"Triage check for {options.source}, {WRITTEN_BY} (kit/triage/)."


def announcement(reading: Reading, source: str, releases: list[str], devices: int | None = None) -> str:
    """The one line said before the report's code runs: whose code, where, with what access."""
    on = f" with {devices} host devices" if devices else ""
    return (f"runs the report's code now: block {reading.choice.block.number} of {source} on jax "
            f"{' and '.join(releases)}{on}, in the project's folder, as you (it can read and write what you can)")


def devices_asked(code: str) -> int | None:
    """The number of devices the report's code asks for: ``xla_force_host_platform_device_count=N``, a mesh's
    shape (``create_device_mesh((2, 2))``, ``make_mesh((4,), ...)``, ``.reshape(2, 2)``), ``jax.devices()[:N]``."""
    found = [int(n) for n in re.findall(r"xla_force_host_platform_device_count[=\s'\"]*(\d+)", code)]
    found += [int(n) for n in re.findall(r"devices\(\)\s*\)?\s*\[\s*:\s*(\d+)\s*\]", code)]
    meshes = r"(?:create_device_mesh|make_mesh|devices\(\)\s*\)?[^\n]*?\.reshape)"  # a reshape of the devices only
    for shape in re.findall(meshes + r"\s*\(\s*[(\[]?\s*([\d\s,]+?)\s*[)\]]", code):
        sizes = [int(n) for n in re.findall(r"\d+", shape)]
        if sizes:
            found.append(math.prod(sizes))
    return max(found) if found and max(found) > 1 else None


class RunMore(Protocol):
    """Runs the check on one more release (``keep``: count it among the triage's runs)."""

    def __call__(self, version: str, keep: bool = True) -> Run: ...


@dataclass(frozen=True)
class Releases:
    reported: str
    worked: str
    newest: str


def decide(result: Triage, matrix: Matrix, options: TriageOptions, runs: dict[str, Run], releases: Releases,
           run_more: RunMore | None = None) -> None:
    """The check to keep, each release's verdict and the bisect: by the difference between the two runs where
    there is one (kit/triage/difference.py), else by the reported failure on each.

    Where the reporter's release and the newest behave the same and the text names a release that worked, that
    release is run too (``run_more``): the difference between it and the reporter's is then the check.
    """
    reported, newest, worked = releases.reported, releases.newest, releases.worked
    first = reported or worked
    if not first or first == newest:
        _by_reported_failure(result, matrix, options, runs, reported or "", newest)
        return
    regression = not reported or reported == worked  # the text says the first release worked
    bad, good = (runs[newest], runs[first]) if regression else (runs[first], runs[newest])
    found = _without_noise(result, difference(bad, good), run_more)
    if found is None and not regression and worked and worked not in runs and run_more is not None \
            and bad.outcome is not None and good.outcome is not None:
        found = _without_noise(result, difference(bad, run_more(worked)), run_more)
        if found is not None:
            _by_difference(result, options, runs, found)
            result.answer = (f"reproduced on the reporter's release {reported}; still there in the newest release, "
                             f"{newest} (it behaves as on {reported}); {worked}, where the report says it worked, "
                             "behaves otherwise")
            result.verdicts[newest] = f"AFFECTED: {runs[newest].summary()}"
            result.bisect_argv = bisect_argv(result, matrix, options, good=worked, bad=reported)
            return
    good_failed = good.outcome is not None and good.outcome.get("exception") is not None
    # A crash is the bug: the newest raising instead is no other failure masking it (another exception judges 125).
    crashed = bad.outcome is not None and block_outcome.is_crash(bad.outcome)
    if found is not None and good_failed and not shows_reported(result.reading, good.outcome) and not regression \
            and not crashed:
        result.details.append(f"the newest, {newest}, ended in another failure ({good.summary()}): it cannot say "
                              "whether the bug is there")
        if shows_reported(result.reading, bad.outcome) is None:  # nothing the report names to judge either by
            _write_failure_check(result, options)
            result.answer = (f"the newest, {newest}, fails otherwise and the report names no failure to tell the "
                             "bug by: no bisect")
            result.verdicts = {v: f"{'INCONCLUSIVE' if v == newest else 'RAN'}: {r.summary()}" for v, r in runs.items()}
            result.details += _proposals(result.reading, result, options.text)
            return
        _by_reported_failure(result, matrix, options, runs, reported, newest, newest_inconclusive=True)
        return
    if found is None:
        _by_reported_failure(result, matrix, options, runs, reported, newest, same=bad.outcome is not None
                             and good.outcome is not None)
        return
    verdicts = _by_difference(result, options, runs, found)
    if regression:
        result.answer = (f"a regression: behaves as reported on the newest, {newest}, not as on {first}, where the "
                         "report says it worked")
        result.bisect_argv = bisect_argv(result, matrix, options, good=first, bad=newest)
        return
    plan_bisect(result, matrix, options, reported, newest, verdicts)


def _without_noise(result: Triage, found: Difference | None, run_more: RunMore | None) -> Difference | None:
    """``found`` less the printed lines that differ between two runs of either side's release (randomness,
    seeded or not, an object's id, a time): those are noise, never the bug. Costs two more runs, and only where
    a printed line is among the features. (The good side alone was run twice: a line that varied only on the
    reporter's release, printed random floats, was judged, and the bisect skipped its probes.)"""
    if found is None or run_more is None or not any(f["what"] == "line" for f in found.features):
        return found
    noisy: dict[str, set[int]] = {}
    shapes: set[str] = set()  # the noisy lines' shapes, so the report's quote of one is not matched either
    for side, run in (("good", found.good), ("bad", found.bad)):
        again = run_more(run.version, False)
        if again.outcome is not None and run.outcome is not None:
            noisy[side] = {f["bad"] for f in block_outcome.features(run.outcome, again.outcome)
                           if f["what"] == "line" and f["bad"] is not None}
            shapes |= {" ".join(run.outcome["lines"][at][0].split()) for at in noisy[side]}
    kept = tuple(f for f in found.features if f["what"] != "line"
                 or not any(_line_at(f, side) in lines for side, lines in noisy.items()))
    dropped = [(f, [side for side, lines in noisy.items() if _line_at(f, side) in lines])
               for f in found.features if f not in kept]
    if dropped:
        versions = {"good": found.good.version, "bad": found.bad.version}
        result.details.append("noise, not judged: " + ", ".join(
            f"{feature_name(f)} (differs between two runs of {' and of '.join(versions[s] for s in sides)})"
            for f, sides in dropped))
    return Difference(found.bad, found.good, kept, frozenset(shapes)) if kept else None


def _line_at(feature: Feature, side: str) -> int | None:
    """The index of a line feature's line on ``side`` (``bad`` or ``good``); None where that run has none."""
    return feature.get("bad") if side == "bad" else feature.get("good")


def _by_difference(result: Triage, options: TriageOptions, runs: dict[str, Run], found: Difference) -> dict[str, str]:
    """Write the check that judges by ``found``; the verdicts of the two runs it was made from."""
    bad, good = found.bad, found.good
    assert bad.outcome is not None and good.outcome is not None  # `difference` compares two outcomes only
    judged = Judged(bad.outcome, good.outcome, found.features, bad.version, good.version)
    about = [f"Decided by difference: bad behaves as on jax {bad.version}, good as on jax {good.version}.",
             *found.lines(), "Exit 1 as on the bad release, 0 as on the good one, 125 otherwise."]
    result.check = write_check(result.check.path.parent, result.check.path.stem,
                               outcome_check_text(result.reading.choice.block, _header(options), about, judged),
                               DIFFERENCE_BAD_IF)
    result.judged = judged
    shown = found.lines()
    more = [feature_name(feature) for feature in found.features[2:]]
    result.details += [f"differs: {line}" for line in shown[:2]]
    if more:
        result.details[-1] += f" (and {len(more)} more: {', '.join(more)[:60]})"
    result.details.append(confirmation(result.reading, bad, good, found.features, found.noise))
    verdicts: dict[str, str] = {bad.version: Verdict.AFFECTED, good.version: Verdict.UNAFFECTED}
    result.verdicts = {v: f"{verdicts[v].upper()}: {runs[v].summary()}" for v in runs if v in verdicts}
    return verdicts


def _by_reported_failure(result: Triage, matrix: Matrix, options: TriageOptions, runs: dict[str, Run],
                         reported: str, newest: str, newest_inconclusive: bool = False, same: bool = False) -> None:
    """No difference to judge by: the check is the reported failure itself (its exception's ``bad_if``, its wrong
    value), each release judged by it from its run."""
    reading = result.reading
    _write_failure_check(result, options)
    verdicts = {version: _reported_verdict(reading, run) for version, run in runs.items()}
    if newest_inconclusive:
        verdicts[newest] = Verdict.INCONCLUSIVE
    # A run that could not speak for the block (timed out, not installable) says its status once, not twice.
    result.verdicts = {v: runs[v].summary() if runs[v].outcome is None and verdicts[v] == runs[v].status
                       else f"{verdicts[v].upper()}: {runs[v].summary()}" for v in runs}
    if same and len(runs) == 2 and not all(verdict == Verdict.AFFECTED for verdict in verdicts.values()):
        result.answer = f"behaves the same on {' and '.join(runs)}: no difference to bisect by"
        result.details += _proposals(reading, result, options.text)
        return
    plan_bisect(result, matrix, options, reported, newest, verdicts)


def _write_failure_check(result: Triage, options: TriageOptions) -> None:
    """The check of the reported failure itself (its exception's ``bad_if``, its wrong value; any failure where the
    report names none): another script than the capture, so triage's runs are not its probes."""
    reading = result.reading
    result.check = write_check(result.check.path.parent, result.check.path.stem,
                               check_text(reading.choice.block, reading.failure, reading.bad_if, _header(options)),
                               reading.bad_if)
    result.judged = None


def _reported_verdict(reading: Reading, run: Run) -> str:
    """The run judged by the reported failure alone: shown is affected, a clean exit unaffected, another failure
    inconclusive; where the report names no failure, any failure is the bug."""
    if run.outcome is None:
        return run.status
    shown = shows_reported(reading, run.outcome)
    failed = run.outcome["exit"] != 0
    if shown is False and failed and chain_shows_reported(reading, run):
        shown = True  # an earlier link of its chain is the reported one (docs/triage.md: each link is judged)
    if shown is None:
        return Verdict.AFFECTED if failed else Verdict.UNAFFECTED
    return Verdict.AFFECTED if shown else Verdict.INCONCLUSIVE if failed else Verdict.UNAFFECTED


def _proposals(reading: Reading, result: Triage, report: str) -> list[str]:
    """What the text names that this run did not have: another release, more devices, a GPU."""
    text = reading.choice.block.code + "\n" + report
    out = []
    if reading.versions.last_good or reading.versions.first_bad:
        named = ", ".join(v for v in (reading.versions.last_good, reading.versions.first_bad) if v)
        out.append(f"try the release the report names: --reported {named.split(', ')[-1]}")
    else:
        out.append("try an older release: --reported VERSION (one the reporter may have run)")
    if result.host_devices is None and re.search(r"(?i)\b(mesh|shard|pmap|device_put|NamedSharding)", text):
        out.append("the code shards: give it devices with --host-devices N")
    if re.search(r"(?i)\b(gpu|cuda|rocm|tpu)\b", report):
        out.append("the report mentions a GPU or TPU: this ran on CPU only (untested there)")
    return ["try: " + "; ".join(out)]


def run_on(matrix: Matrix, options: TriageOptions, written: WrittenCheck, name: str, version: str,
           devices: int | None, log: Log) -> Run:
    """The check on one release, through the kit's runner; its record kept in ``reports/triage/records/``, its
    output in ``reports/triage/logs/`` (on the console too with ``-v``)."""
    check = script_check(name, written.path, host_devices=devices, timeout_s=options.timeout_s,
                         bad_if=bad_if_pattern(written.bad_if, "bad_if") if written.bad_if else None)
    output = matrix.layout.triage_records.parent / "logs" / f"{name}-{version}.log"
    output.parent.mkdir(parents=True, exist_ok=True)
    output.unlink(missing_ok=True)
    request = RunRequest(check=name, version=version, script=check, reproduce=options.reproduce,
                         records_dir=matrix.layout.triage_records, output_log=output, echo=options.verbose)
    log(f"jax {version}: running the block (stopped at {options.timeout_s} s; --timeout SECONDS sets another limit)")
    with still_running(log, f"jax {version}", options.timeout_s):
        record, path = run_check(matrix, request, log if options.verbose else _quiet(log, version))
    project = matrix.path.parent
    return captured(version, record, report_path(path, project), report_path(output, project))


def _quiet(log: Log, version: str) -> Log:
    """The runner's steps kept off the console (``-v`` shows them): only that an environment is being built."""
    def shown(line: str) -> None:
        if line.startswith("creating environment"):
            log(f"building jax {version}'s environment (once; a few minutes)")
    return shown


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
        if on_newest == Verdict.AFFECTED and good:
            result.bisect_argv = bisect_argv(result, matrix, options, good=good, bad=newest)
        return
    if on_reported != Verdict.AFFECTED:
        result.answer = (f"not reproduced on the reporter's release {reported} ({on_reported}): "
                         f"{result.verdicts.get(reported, '')}")
        return
    fixed = on_newest == Verdict.UNAFFECTED and newest != reported
    state = (f"fixed by the newest release, {newest}" if fixed else
             f"still there in the newest release, {newest}" if on_newest == Verdict.AFFECTED else
             f"{on_newest} on the newest release, {newest}")
    result.answer = f"reproduced on the reporter's release {reported}; {state}"
    fix = bisect_argv(result, matrix, options, good=newest, bad=reported) if fixed else []
    if on_newest not in (Verdict.AFFECTED, Verdict.UNAFFECTED) and newest != reported:
        _newest_cannot_tell(result, newest)
    if good:
        result.bisect_argv, result.other_command = bisect_argv(result, matrix, options, good=good, bad=reported), fix
        if on_newest not in (Verdict.AFFECTED, Verdict.UNAFFECTED):
            result.answer += f"; the newest cannot tell, so the bisect goes toward {good}, where the report says it worked"
    elif fixed:
        result.bisect_argv = fix
    elif on_newest == Verdict.AFFECTED:
        # No release known to work: the bisect gallops back from the newest to find one (--bad alone).
        result.answer += "; the bisect looks for a release where it worked, going back from the newest"
        result.bisect_argv = bisect_argv(result, matrix, options, good=None, bad=newest)
    else:
        # The newest cannot say (it failed otherwise, or could not run): what is known is the reporter's release,
        # so the bisect gallops from there to the newer releases (`--bad` alone, not the newest) for one that works.
        result.answer += (f"; the newest cannot tell, so the bisect looks for a later release where it works, going "
                          f"forward from {reported}")
        result.bisect_argv = bisect_argv(result, matrix, options, good=None, bad=reported)


def _newest_cannot_tell(result: Triage, newest: str) -> None:
    """Say why the newest release decides nothing (once: a failure of another kind says it where it is found)."""
    if not any(detail.startswith(f"the newest, {newest},") for detail in result.details):
        result.details.append(f"the newest, {newest}, cannot say whether the bug is there: "
                              f"{result.verdicts.get(newest, 'it did not run')}")


def bisect_argv(result: Triage, matrix: Matrix, options: TriageOptions, good: str | None, bad: str) -> list[str]:
    """``nox -s bisect -- ...``'s arguments for this check (a path relative to the project, as printed).

    Without ``good`` only ``--bad`` is given, and the bisect gallops to find a good release.
    """
    argv = ["--script", report_path(result.check.path, matrix.path.parent)]
    if result.check.bad_if:
        argv += ["--bad-if", result.check.bad_if]
    if result.host_devices:
        argv += ["--host-devices", str(result.host_devices)]
    if options.timeout_s != DEFAULT_TIMEOUT_S:
        argv += ["--timeout", str(options.timeout_s)]
    argv += (["--crash", "bad"] if result.crash else []) + (["--good", good] if good else []) + ["--bad", bad]
    if options.commits:
        argv.append("--commits")
        if options.jax_repo is not None:
            argv += ["--jax-repo", shown_clone(options.jax_repo, matrix.path.parent)]
    return argv


def shown_clone(path: Path, project: Path) -> str:
    """``path`` relative to the project when inside it, ``~/...`` under home, else as given: the printed command
    must run (`kit.reproduce_line`; a placeholder, ``'<a clone of jax-ml/jax>'``, made ``--commits`` refuse it)."""
    return reproduce_argv(["--jax-repo", str(path)], project)[1]


def command(argv: list[str], begins: str = "nox -s bisect --") -> str:
    return f"{begins} {shlex.join(argv)}"


def answer_lines(result: Triage) -> list[str]:
    """What the triage prints last: what ran where, the answer, and the command to run next."""
    lines = [f"== triage: {result.answer}"]
    if result.verdicts:
        lines.append("   " + "; ".join(f"jax {version}: {sentence.split(':', 1)[0]}"
                                       for version, sentence in result.verdicts.items()))
    lines += [f"   {detail}" for detail in result.details]
    lines.append(f"   check: {result.check.path.name}" + (f" (bad_if {result.check.bad_if})" if result.check.bad_if else ""))
    if result.bisect_argv:
        lines.append(f"   next: {command(result.bisect_argv, result.command)}")
    if result.other_command:
        lines.append(f"   and what fixed it: {command(result.other_command, result.command)}")
    return [re.sub(r"\s+$", "", line) for line in lines]
