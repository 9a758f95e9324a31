"""The flow of ``reduce``: options, both releases' environments, the original's runs and the problem they
show (or the one-sentence refusal), the reduction with its progress, the result run as a user runs it, the
files written. Ctrl-C during the reduction keeps the best program so far and says so."""

from __future__ import annotations

import ast
import math
import re
import shlex
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Sequence

from .. import scratch
from ..arguments import asks_help
from ..check_settings import script_check
from ..config import Matrix
from ..errors import KitError
from ..exit_codes import EXIT_FAILED, EXIT_INTERRUPTED, EXIT_OK
from ..install import Environment
from ..log_events import Log
from ..run import runner
import kit.triage.block_outcome as block_outcome  # the foundation's reader of outcomes (tests/test_layers.py)
from . import evidence, issue
from .options import HELP, Options, parse
from .problem import Problem, Refused, found_problem, op_problem
from .program import Program
from .search import Reducer
from .trials import Sides, Tester, environment_info, plain_run
from .workers import Pool

DEVICES_FLAG = "--xla_force_host_platform_device_count"


Handed = tuple[int, "list[str] | None", "Path | None"]
"""The exit code, with ``--bisect`` (the reduced program confirmed) the bisect's command line, and the issue file
written (where the bisect's summary goes): `kit.cli` runs the bisect (the drivers do not import each other)."""


def main(matrix: Matrix, argv: Sequence[str], log: Log) -> Handed:
    if asks_help(argv):
        print(HELP)
        return EXIT_OK, None, None
    options = parse(matrix, argv)
    envs = {release: environment(matrix, options, release, log) for release in (options.bad, options.good)}
    start = starting_program(options)
    with scratch.folder("reduce") as folder:
        # The compile cache saves most of a candidate's compile; with --op, XLA must compile to dump what it read.
        pool = Pool(envs, folder, options.jobs, cache=not options.op)
        try:
            return _reduce(matrix, options, envs, start, pool, folder, log)
        finally:
            pool.close()


def environment(matrix: Matrix, options: Options, release: str, log: Log) -> Environment:
    check = script_check("reduce", options.program, timeout_s=options.timeout_s)
    request = runner.RunRequest(check="reduce", version=release, script=check, timeout_s=options.timeout_s)
    log(f"jax {release}: its environment (a release not built yet is built first: minutes)")
    prepared = runner.prepare(matrix, request, lambda _line: None)
    if prepared.environment is None or prepared.cannot_test:
        raise KitError(f"jax {release} cannot be installed here: {prepared.problem or prepared.cannot_test}",
                       "pick another release (nox -s plan -- VERSION says why)")
    return prepared.environment


def starting_program(options: Options) -> Program:
    """The program as the reduction starts from it: parsed, the op's statement marked, and the host devices it
    needs set inside it (before JAX is imported) where it does not set them itself."""
    text = options.program.read_text(encoding="utf-8")
    program = Program.parse(text, options.op_line)
    # Always with --op: the kit's dump flags are in XLA_FLAGS, so a program's own os.environ.setdefault would
    # find it set; an assignment of the program's own, further down, still wins.
    if options.devices and (options.op or DEVICES_FLAG not in text):
        settings = ast.parse(f"import os\nos.environ['XLA_FLAGS'] = '{DEVICES_FLAG}={options.devices}'\n").body
        program.tree.body[:0] = settings
        program = program.copy()
    return program


def _reduce(matrix: Matrix, options: Options, envs: dict[str, Environment], start: Program, pool: Pool,
            folder: Path, log: Log) -> Handed:
    began = time.monotonic()
    for release in envs:
        log(f"jax {release}: a warm interpreter imported JAX in {pool.warm(release):.1f} s")
    sides = Sides(options.bad, options.good, options.program.name, folder, options.timeout_s, bool(options.op))
    tester = Tester(None, pool, sides, options.jobs)
    try:
        problem = problem_of(options, tester, start)
    except Refused as refused:
        log(f"refused: {refused}")
        return EXIT_FAILED, None, None
    tester.problem = problem
    log(f"the problem kept: {problem.sentence()}")
    sides.timeout = candidate_timeout(options.timeout_s, problem)
    log(f"a candidate's run is stopped after {sides.timeout} s ({SLOWER}x the original's slowest run, "
        f"{CANDIDATE_FLOOR_S} s at least; --timeout {options.timeout_s} at most)")
    log(f"reducing {start.statements} statements (--time-limit {options.time_limit_s} s, --jobs {options.jobs})")
    reducer = Reducer(start, tester, began + options.time_limit_s,
                      progress=lambda p, how: log(_progress(tester, p, "best so far by " + how, start, began)))
    reducer.batch = lambda doing, size, kept: None if kept else log(  # a kept one is said as the best so far
        _progress(tester, reducer.best, _batch_said(doing, size), start, began))
    stopped = False
    try:
        best = reducer.reduce()
    except KeyboardInterrupt:
        stopped, best = True, reducer.best
        log(f"stopped (Ctrl-C): keeping the best so far, {best.statements} statements; its files are written next "
            f"and the command exits {EXIT_INTERRUPTED}")
    if reducer.out_of_time:
        log(time_limit_said(options.time_limit_s))
    seconds = time.monotonic() - began
    log(f"reduced {start.statements} -> {best.statements} statements in {seconds:.0f} s: "
        f"{tester.counts.tried} candidates tried, {tester.counts.run} run ({tester.counts.runs} runs of a release), "
        f"{tester.counts.refused} refused unrun, {tester.counts.cached} cached")
    return _written(matrix, options, envs, problem, start, best, tester, seconds, stopped, log,
                    out_of_time=reducer.out_of_time)


def time_limit_said(limit_s: int) -> str:
    return f"stopped by the time limit ({limit_s} s) with the best so far: more time (--time-limit) may cut further"


SLOWER = 4
"""How many times the original's slowest run a candidate may take: a cut that loses a loop's ``break`` would
otherwise hold a worker for the whole ``--timeout`` (two minutes of a five-minute reduction)."""
CANDIDATE_FLOOR_S = 20


def candidate_timeout(timeout_s: int, problem: Problem) -> int:
    slowest = max(problem.bad.seconds, problem.good.seconds)
    return min(timeout_s, max(CANDIDATE_FLOOR_S, math.ceil(SLOWER * slowest)))


def devices_set(program: Program) -> int | None:
    """The host device count the program sets itself (the last it sets), if it sets one."""
    counts = re.findall(DEVICES_FLAG + r"=(\d+)", program.text)
    return int(counts[-1]) if counts else None


def problem_of(options: Options, tester: Tester, start: Program) -> Problem:
    """What the original shows: explain's evidence for ``--op``, else the difference of two runs a side."""
    first = tester.run_both(start)
    if options.op:
        return op_problem(first[0], first[1], start.marked_lines(), options.op)
    runs = [first, tester.run_both(start)]
    if any(block_outcome.features(a.outcome, b.outcome) for a, b in zip(*runs)):
        # A line varies between runs of one release: more runs a side, so that what is kept is what every
        # run shows (a time-seeded draw) and the same program gets the same answer whatever its draws.
        runs += [tester.run_both(start) for _ in range(NOISY_RUNS - len(runs))]
    return found_problem([bad for bad, _ in runs], [good for _, good in runs])


NOISY_RUNS = 4
"""Runs a side of an original whose printed lines vary between two runs of one release."""


def _progress(tester: Tester, program: Program, said: str, start: Program, began: float) -> str:
    counts = tester.counts
    return (f"  {time.monotonic() - began:5.0f} s  {program.statements:3d} statements left (from {start.statements}); "
            f"{counts.tried} candidates tried, {counts.run} run; {said}")


def _batch_said(doing: str, size: int) -> str:
    return f"{doing}: {size} judged, none kept"


def _written(matrix: Matrix, options: Options, envs: dict[str, Environment], problem: Problem, start: Program,
             best: Program, tester: Tester, seconds: float, stopped: bool, log: Log,
             out_of_time: bool = False) -> Handed:
    files = issue.Files.of(options.out, options.program.stem)
    options.out.mkdir(parents=True, exist_ok=True)
    if options.op:  # plain python then shows the op's evidence, and the check judges it
        best = evidence.printing_evidence(best)
    files.write_program(best)
    log(f"the reduced program runs as python {files.minimal.name} on each release (plain, as a user runs it)")
    with ThreadPoolExecutor(max_workers=4) as side_by_side:  # each release's runs and its environment at once
        runs = {r: [side_by_side.submit(plain_run, envs[r], r, files.minimal, options.timeout_s)
                    for _ in range(problem.repeats)] for r in envs}
        infos = {r: side_by_side.submit(environment_info, envs[r], devices_set(best)) for r in envs}
        every = {release: [ran.result() for ran in ran_all] for release, ran_all in runs.items()}
        plain = {release: seen[0] for release, seen in every.items()}
        environments = {release: info.result() for release, info in infos.items()}
    confirmed = problem.holds_over(every[options.bad], every[options.good], best.marked_lines()) \
        if not options.op else None
    explained = issue.explained_runs(matrix, options, envs, files, log) if options.op else None
    if explained is not None:
        confirmed = problem.holds(explained[0], explained[1], best.marked_lines())
    said = issue.ReductionReport(options, problem, start, best, plain, environments, explained, tester.counts, seconds,
                        stopped, bool(confirmed), out_of_time)
    files.write_check(said)
    files.write_issue(said, issue.known_match(matrix, problem, plain, explained, best.text))
    if confirmed:
        log(f"confirmed: as python {files.minimal.name}, jax {options.bad} shows the problem and jax {options.good} "
            f"does not; its runs: {problem.sentence((plain[options.bad], plain[options.good]))}")
    else:
        seen = (explained if explained is not None else (plain[options.bad], plain[options.good]))
        log(f"NOT confirmed: as python {files.minimal.name}, "
            + issue.not_confirmed(problem, seen[0], seen[1]) + " (see the issue text)")
    for path in (files.minimal, files.check, files.issue):
        log(f"wrote {path}")
    return ending(options, files, best, stopped, bool(confirmed), log)


def ending(options: Options, files: issue.Files, best: Program, stopped: bool, confirmed: bool, log: Log) -> Handed:
    """The exit once the files are written: 130 where Ctrl-C stopped the reduction (the files hold the best so
    far, never read as a finished reduction), 1 where the plain runs did not confirm it, else 0 (and the bisect)."""
    if stopped:
        log(f"interrupted: {files.minimal.name} is the best so far ({best.statements} statements), not the end "
            "of the reduction")
        return EXIT_INTERRUPTED, None, files.issue
    if not confirmed:
        return EXIT_FAILED, None, files.issue
    if options.bisect:
        log("bisecting the reduced program's check: " + shlex.join(bisect_argv(options, files, best)))
        return EXIT_OK, bisect_argv(options, files, best), files.issue
    return EXIT_OK, None, files.issue


def bisect_argv(options: Options, files: issue.Files, best: Program) -> list[str]:
    """The bisect of the reduced program's check between the two releases."""
    argv = ["--script", str(files.check), "--good", options.good, "--bad", options.bad]
    if options.op:  # the op's evidence itself, as explain reads it
        argv = ["--explain", str(files.minimal), "--op", f"{files.minimal.name}:{(best.marked_lines() or (0, 0))[0]}",
                "--good", options.good, "--bad", options.bad]
    if options.commits:
        argv += ["--commits"] + (["--jax-repo", options.jax_repo] if options.jax_repo else [])
    return argv
