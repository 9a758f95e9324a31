"""What ``reduce`` writes into ``--out``: ``<program>_min.py``, ``<program>_check.py`` and ``<program>_issue.md``.

Every statement of the issue text comes from a run: the reduced program's own runs as ``python FILE`` in each
release's environment (what each printed), ``jax.print_environment_info()`` in each, explain's evidence of
the reduced program (``--op``: `kit.run.explained.dumped_run`, the kit's runner), the catalogue's entries
that evidence matches (`kit.known.signs`), and the reduction's own counts. Nothing is paraphrased from
the original program. Strings from the runs are made inert (`kit.markdown_text`).
"""

from __future__ import annotations

import json
import re
import shlex
from dataclasses import dataclass
from pathlib import Path

from ..atomic_files import atomic_write_texts
from ..check_settings import script_check
from ..config import Matrix
from ..hlo import Fingerprint
from ..install import Environment, release_bytecode_env
from ..known.catalogue import Entry, load_catalogues
from ..known.listing import range_text
from ..known.measured import load_measurements, ranges
from ..known.signs import Raised, difference_match, fingerprint_match
from ..log_events import Log
from ..markdown_text import code, fenced, inert
from ..config import catalogue_folders
from ..run import explained, script_runs
import kit.triage.block_outcome as block_outcome  # the foundation's reader of outcomes (tests/test_layers.py)
from . import evidence, same_call
from .options import Options
from .problem import Problem, at_lines, cut, op_named
from .program import Program
from .runs import Seen
from .trials import Counts

_OUTCOME_SOURCE = Path(block_outcome.__file__).read_text(encoding="utf-8")
"""What the check carries to judge a run (stdlib only: it runs in each release's environment)."""
BEHAVES_AS_BAD = "SHOWS THE PROBLEM:"


@dataclass(frozen=True)
class Files:
    out: Path
    stem: str

    @classmethod
    def of(cls, out: Path, stem: str) -> Files:
        return cls(out, stem)

    @property
    def minimal(self) -> Path:
        return self.out / f"{self.stem}_min.py"

    @property
    def check(self) -> Path:
        return self.out / f"{self.stem}_check.py"

    @property
    def issue(self) -> Path:
        return self.out / f"{self.stem}_issue.md"

    def write_program(self, program: Program) -> None:
        atomic_write_texts({self.minimal: program.text})

    def write_check(self, report: ReductionReport) -> None:
        atomic_write_texts({self.check: check_text(report)})

    def write_issue(self, report: ReductionReport, known: list[str]) -> None:
        atomic_write_texts({self.issue: "\n".join(issue_lines(report, self, known)) + "\n"})


@dataclass(frozen=True)
class ReductionReport:
    options: Options
    problem: Problem
    start: Program
    best: Program
    plain: dict[str, Seen]
    """Each release's run of the reduced program as ``python FILE``."""
    environments: dict[str, str]
    explained: tuple[Seen, Seen] | None
    counts: Counts
    seconds: float
    stopped: bool
    confirmed: bool
    out_of_time: bool = False
    """Whether ``--time-limit`` ended the reduction (said in the issue text: more time may cut further)."""

    @property
    def bad(self) -> Seen:
        return self.plain[self.options.bad]

    @property
    def good(self) -> Seen:
        return self.plain[self.options.good]


def explained_runs(matrix: Matrix, options: Options, envs: dict[str, Environment], files: Files,
                   log: Log) -> tuple[Seen, Seen]:
    """The reduced program explained on each release, as ``explain`` runs a program (its dump read)."""
    seen = []
    for release in (options.bad, options.good):
        env = envs[release]
        check = script_check("reduce", files.minimal, timeout_s=options.timeout_s)
        run = explained.dumped_run(script_runs.run_script, script_runs.scratch_dir, env, check, "cpu",
                                   options.timeout_s, lambda _line: None, release_bytecode_env(env), cwd=files.out,
                                   shown=lambda path: Path(path).name)
        said = run.outcome.evidence.get("output_tail")
        tail = [str(line) for line in said] if isinstance(said, list) else run.output_tail
        code_seen = run.outcome.evidence.get("exit_code")
        outcome = block_outcome.outcome(code_seen if isinstance(code_seen, int) else -9, "\n".join(tail))
        seen.append(Seen(release, outcome, "\n".join(tail), "", 0.0, fingerprints=run.fingerprints))
    return seen[0], seen[1]


def check_text(report: ReductionReport) -> str:
    """A script for ``bisect --script``: runs the reduced program, exit 1 where it behaves as on the bad release,
    0 as on the good one, 125 otherwise (triage's judge, kit/triage/block_outcome.py, carried inside)."""
    bad, good = report.bad.outcome, report.good.outcome
    noise = set(report.problem.noise)
    from .problem import shape
    features = [f for f in block_outcome.features(bad, good)
                if f["what"] != "line" or not any(
                    at is not None and shape(side["lines"][at][0]) in noise
                    for side, at in ((bad, f.get("bad")), (good, f.get("good"))))]
    options = report.options
    doc = (f"The reduced {options.shown}, as a check for `jax-kit bisect --script` (written by jax-kit reduce).\n\n"
           f"Exit 1 where it behaves as on jax {options.bad}, 0 as on jax {options.good}, 125 otherwise, judged on:\n"
           + "\n".join(f"  {line}" for line in _feature_lines(bad, good, features, options)))
    if options.op:
        doc += (f"\n\nThe problem kept is explain's evidence for --op; the reproducer prints what XLA compiled (each "
                "custom call's shape on one device, the all-gathers), and this check judges what it printed. "
                f"Bisect by explain's own reading with: jax-kit bisect --explain {report_file(options)}_min.py "
                f"--op {report_file(options)}_min.py:{(report.best.marked_lines() or (0, 0))[0]}")
    docstring = '"""' + doc.replace("\\", "\\\\").replace('"""', '\\"\\"\\"') + '\n"""\n'
    references = (f"json.loads({json.dumps(bad)!r}), json.loads({json.dumps(good)!r}), "
                  f"json.loads({json.dumps(features)!r}), ({options.bad!r}, {options.good!r})")
    tail = (f"\n\nPROGRAM = {report.best.text!r}\n\nif __name__ == \"__main__\":\n"
            f"    main(PROGRAM, {options.program.stem + '_min.py'!r}, {references}, {BEHAVES_AS_BAD!r})\n")
    return docstring + "\n" + _OUTCOME_SOURCE.rstrip() + tail


def report_file(options: Options) -> str:
    return options.program.stem


def _feature_lines(bad: block_outcome.BlockOutcome, good: block_outcome.BlockOutcome, features: list[block_outcome.Feature],
                   options: Options) -> list[str]:
    return [f"{f['what']}: {block_outcome.describe(bad, bad, good, f)} on {options.bad}, "
            f"{block_outcome.describe(good, bad, good, f)} on {options.good}" for f in features] or ["(no difference)"]


def title(report: ReductionReport) -> str:
    problem, options = report.problem, report.options
    if not report.confirmed:
        return (f"NOT confirmed: the reduced {options.program.stem}_min.py does not show the difference between "
                f"jax {options.bad} and jax {options.good}")
    if problem.kind == "op" and problem.op is not None:
        function, op, state = problem.op.bad[0]
        return (f"{function}: {op} is {state} on every device of a sharded batch on jax {options.bad} "
                f"(split on jax {options.good})")
    raised = report.bad.outcome.get("exception")
    if problem.kind == "exception" and raised is not None:
        return f"{raised['type']} on jax {options.bad}, not on jax {options.good}: {cut(raised['text'], 100)}"
    if problem.kind == "exit":
        return f"exit {report.bad.outcome['exit']} on jax {options.bad}, {report.good.outcome['exit']} on jax {options.good}"
    return f"different values printed on jax {options.bad} than on jax {options.good}"


def issue_lines(report: ReductionReport, files: Files, known: list[str]) -> list[str]:
    options = report.options
    out = [f"# {inert(title(report))}", "", "## What happens", "", f"On jax {options.bad}, " + _happens(report, options.bad, report.bad), "",
           "## What was expected", "", f"As on jax {options.good}: " + _happens(report, options.good, report.good),
           "", "## Minimal reproducer", "", *_python(report.best.text.rstrip()), "",
           f"Run as `python {files.minimal.name}` ({report.best.statements} statements; no other file, no setting "
           "outside it).", ""]
    for release, seen in ((options.bad, report.bad), (options.good, report.good)):
        out += [f"## Output on jax {release}", "", *fenced(_shown_output(seen, files)), ""]
    if report.explained is not None:
        out += ["## Explain's evidence (`--op`)", ""] + _evidence(report) + [""]
    out += ["## Known problem", ""] + (known or ["None of the kit's catalogue of known problems matches it."]) + [""]
    for release in (options.bad, options.good):
        out += [f"## Environment: jax {release}", "", "`jax.print_environment_info()`:", "",
                *fenced(_machine_neutral(report.environments.get(release, "")) or "(it printed nothing)"), ""]
    out += ["## How this was made", ""] + [f"* {line}" for line in _made(report, files)]
    return out


def _python(text: str) -> list[str]:
    lines = fenced(text)
    return [lines[0] + "python", *lines[1:]]


def _happens(report: ReductionReport, release: str, seen: Seen) -> str:
    raised = seen.outcome.get("exception")
    if raised is not None:
        return f"the program raises {code(raised['type'] + ': ' + cut(raised['text'], 300))} (exit {seen.outcome['exit']})."
    lines = seen.outcome["lines"]
    last = block_outcome.filled(lines[-1]) if lines else ""
    said = f"the program exits {seen.outcome['exit']}"
    said += f" and prints {code(cut(last, 300))}" if last else " and prints nothing"
    if report.explained is not None:
        side = report.explained[0] if release == report.options.bad else report.explained[1]
        found = _op_sentences(at_lines(side.fingerprints, report.best.marked_lines()))
        said += "; explain reads its compile as: " + ("; ".join(found) if found else "nothing of the op's line")
    return said + "."


def _op_sentences(prints: list[Fingerprint]) -> list[str]:
    out = []
    for f in prints:
        batch = (f"{f.device_batch} of {f.global_batch} per device" if f.device_batch is not None
                 and f.global_batch is not None else "")
        said = f"{op_named(f.function, f.op)} ({f.pass_}) {f.state.value}" + (f", {batch}" if batch else "")
        if f.targets:
            said += f", custom call {', '.join(f.targets[:2])}"
        if f.fed_by:
            said += f", fed by {', '.join(f.fed_by[:2])}"
        out.append(inert(said))
    return list(dict.fromkeys(out))


def _evidence(report: ReductionReport) -> list[str]:
    assert report.explained is not None
    lines = report.best.marked_lines()
    out = [f"The op's statement is line {lines[0] if lines else '?'} of the reproducer "
           f"(`{report.options.op}` of the original). What XLA compiled there, as `jax-kit explain` reads it:", ""]
    for seen in report.explained:
        found = _op_sentences(at_lines(seen.fingerprints, lines))
        out.append(f"* jax {seen.release}: " + ("; ".join(found) if found else "nothing compiled at that line"))
    return out


def _shown_output(seen: Seen, files: Files) -> str:
    # Leading spaces are the program's own (an indented line): only blank lines around the output go.
    text = (seen.stdout.rstrip() + ("\n" + seen.stderr.rstrip() if seen.stderr.strip() else "")).strip("\n")
    text = text.replace(str(files.out) + "/", "")
    text = re.sub(r'"/[^"\n]*/site-packages/', '"<site-packages>/', text)  # no machine's folders in an issue
    lines = text.splitlines()
    return "\n".join(lines[-40:]) or "(nothing)"


def _machine_neutral(text: str) -> str:
    """The host's name left out of what ``print_environment_info`` says of the machine."""
    return re.sub(r"node='[^']*'", "node='<host>'", text)


def _made(report: ReductionReport, files: Files) -> list[str]:
    options, counts = report.options, report.counts
    command = ["jax-kit", "reduce", options.shown, "--bad", options.bad, "--good", options.good, "--out",
               files.out.name] + (["--op", options.op] if options.op else [])
    given = Program.parse(options.program.read_text(encoding="utf-8")).statements
    added = report.start.statements - given  # the host-device setting the kit put at the top, where it did
    start = f"{given} statements" + (f" (and the {added} the kit added to set its host devices)" if added > 0 else "")
    said = [f"Reduced by `{shlex.join(command)}` from {start} to "
            f"{report.best.statements} in {report.seconds:.0f} s: {counts.tried} candidates tried, {counts.run} run "
            f"({counts.runs} runs of a release), {counts.refused} refused without a run, {counts.cached} cached.",
            f"The problem kept, both ways (jax {options.bad} shows it AND jax {options.good} does not): "
            f"{inert(report.problem.sentence((report.bad, report.good)))}." if report.confirmed else
            f"The problem was NOT confirmed: {inert(not_confirmed(report.problem, report.bad, report.good))}."]
    if report.stopped:
        said.append("The reduction was stopped (Ctrl-C) before its end: this is the best program found until then.")
    if report.out_of_time:
        said.append(f"The reduction was stopped by the time limit ({options.time_limit_s} s) with the best so far: "
                    "more time may cut further.")
    # With --op the program's output says nothing of the op: what confirms it is explain's HLO of that run.
    how = "with explain's compiled HLO of" if report.problem.kind == "op" else "with"
    shown = "the evidence above" if report.problem.kind == "op" else "the outputs above"
    said.append(("Confirmed" if report.confirmed else "NOT confirmed")
                + f" {how} `python {files.minimal.name}` in each release's environment ({shown}).")
    if report.problem.kind != "op":
        said.append(f"`{files.check.name}` is the reproducer as a check: "
                    f"`jax-kit bisect --script {files.check.name} --good {options.good} --bad {options.bad}`.")
    else:
        line = (report.best.marked_lines() or (0, 0))[0]
        said.append(f"The reproducer's dump folder (`{evidence.DUMP}`) and its last statement print what XLA "
                    f"compiled (those {evidence.ADDED} statements added by the kit, not reduced)"
                    + (f"; `{files.check.name}` judges that line: `jax-kit bisect --script {files.check.name} --good "
                       f"{options.good} --bad {options.bad}`" if _printed_differs(report) else
                       f"; the two releases printed it alike, so `{files.check.name}` cannot judge it")
                    + f". Bisect by explain's reading of the evidence: `jax-kit bisect --explain {files.minimal.name} "
                    f"--op {files.minimal.name}:{line} --good {options.good} --bad {options.bad}`.")
    return said


def _printed_differs(report: ReductionReport) -> bool:
    return bool(block_outcome.features(report.bad.outcome, report.good.outcome))


def not_confirmed(problem: Problem, bad: Seen, good: Seen) -> str:
    """What the reduced program's confirming runs showed where they do not show the problem both ways."""
    if problem.kind == "op":  # the op's sign is the original's: what the reduced program compiled is explain's
        seen = "explain's reading of its compile on each release is in the evidence"
    elif not block_outcome.features(bad.outcome, good.outcome):
        seen = f"they ran alike on jax {bad.release} and jax {good.release} (the same exit code and printed lines)"
    else:
        seen = f"they showed: {problem.sentence((bad, good))}"
    return (f"the reduced program's confirming runs do not show jax {bad.release} behave as the original did "
            f"and jax {good.release} not; {seen}; the original's runs showed: {problem.sentence()}")


KINDS_BY_CALL = {"value": ("wrong-values",), "exception": ("exception", "compile"), "exit": ("exception", "compile")}
"""The catalogue's kinds a problem of each kind may be matched to by the call (`kit.reduce.same_call`)."""


def known_match(matrix: Matrix, problem: Problem, plain: dict[str, Seen],
                explained_seen: tuple[Seen, Seen] | None, reproducer: str = "") -> list[str]:
    """The catalogue's entries the reduced program's runs show, each with how well, its range and workaround; then
    those whose check calls the JAX function the reproducer calls, as it calls it (said as a match by the call)."""
    entries = load_catalogues(catalogue_folders(matrix))
    out = _matched_by_runs(entries, problem, plain, explained_seen)
    for entry in entries:
        if entry.kind not in KINDS_BY_CALL.get(problem.kind, ()) or any(f"`{entry.id}`" in line for line in out):
            continue
        call = same_call.matching(reproducer, entry.check) if reproducer else None
        if call is not None:
            out.append(f"* may be known problem {code(entry.id)}: {inert(entry.title)} (a match by the call, not by "
                       f"a run: its check calls {code(call)} as the reproducer does); measured "
                       f"{inert(_measured(entry))}" + (f"; workaround: {inert(entry.workaround)}" if entry.workaround
                                                       else "") + (f"; upstream: {entry.upstream}" if entry.upstream else ""))
    return out


def _measured(entry: Entry) -> str:
    spans = ranges(load_measurements(entry.check.parent, entry.id))
    return "; ".join(range_text(span) for span in spans) if spans else "never measured"


def _matched_by_runs(entries: list[Entry], problem: Problem, plain: dict[str, Seen],
                     explained_seen: tuple[Seen, Seen] | None) -> list[str]:
    bad, good = problem.bad.release, problem.good.release
    out = []
    for entry in entries:
        match = None
        if explained_seen is not None and entry.fingerprint is not None:
            for finding in explained_seen[0].fingerprints:
                match = match or fingerprint_match(entry.id, entry.fingerprint, entry.shows_on, finding,
                                                   explained_seen[0].fingerprints, "cpu")
        elif explained_seen is None and entry.difference is not None:
            raised, other = (_raised(plain[r].outcome) for r in (bad, good))
            printed = [block_outcome.filled(line) for line in plain[bad].outcome["lines"]]
            match = difference_match(entry.id, entry.difference, raised, other, printed)
        if match is not None and match.full:
            out.append(f"* known problem {code(entry.id)}: {inert(entry.title)} ({match.how_well()}); measured "
                       f"{inert(_measured(entry))}" + (f"; workaround: {inert(entry.workaround)}" if entry.workaround else "")
                       + (f"; upstream: {entry.upstream}" if entry.upstream else ""))
    return out


def _raised(outcome: block_outcome.BlockOutcome) -> Raised | None:
    raised = outcome["exception"]
    return Raised(raised["type"], raised["text"]) if raised is not None else None


def add_bisect(issue: Path, folder: Path, argv: list[str]) -> None:
    """The kit's bisect of the reduced program, added to the issue text: its report's summary as it wrote it."""
    reports = sorted(folder.glob("bisect-*.md"), key=lambda p: p.stat().st_mtime)
    if not reports:
        said = ["The bisect wrote no report (its output above says why)."]
    else:
        lines = [line for line in reports[-1].read_text(encoding="utf-8").splitlines() if line.strip()]
        said = [f"`jax-kit bisect {shlex.join(argv)}` (its report: `{reports[-1].name}`):", "",
                *(f"> {inert(line)}" for line in lines[:14])]
    text = issue.read_text(encoding="utf-8").rstrip() + "\n\n## Bisect\n\n" + "\n".join(said) + "\n"
    atomic_write_texts({issue: text})
