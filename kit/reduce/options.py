"""``reduce PROGRAM --bad R1 --good R2 --out DIR``'s command line, read once into `Options`; each mistake one
sentence and a tip (exit 2), before anything is built or run."""

from __future__ import annotations

import argparse
import ast
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from ..arguments import Parser
from ..check_settings import timeout_seconds
from ..config import Matrix, release_number
from ..errors import UsageError
from ..user_paths import file_problem

DEFAULT_JOBS = 2
DEFAULT_TIMEOUT_S = 120
DEFAULT_TIME_LIMIT_S = 200
DEFAULT_OP_DEVICES = 4
USAGE = ("nox -s reduce -- PROGRAM --bad R1 --good R2 --out DIR [--op FILE:LINE] [--devices N] [--jobs N] "
         "[--timeout S] [--time-limit S] [--bisect [--commits --jax-repo DIR]]")
_TIP = "e.g. nox -s reduce -- train.py --bad 0.4.35 --good 0.5.3 --out reduced/ (docs/reduce.md)"

HELP = f"""usage: {USAGE}

The smallest program that still shows PROGRAM's problem on R1 and still does not on R2, judged by real
runs of both releases; DIR gets PROGRAM_min.py, PROGRAM_check.py (for bisect --script) and PROGRAM_issue.md.

  --bad R1         the release that shows the problem
  --good R2        a release that does not
  --out DIR        where the three files go (made if missing)
  --op FILE:LINE   keep explain's evidence for that line's op (whole batch on R1, split on R2) instead of
                   the difference between the two runs' output
  --devices N      CPU host devices, set inside the program (default {DEFAULT_OP_DEVICES} with --op, else none)
  --jobs N         candidates run side by side (default {DEFAULT_JOBS})
  --timeout S      one run's limit (default {DEFAULT_TIMEOUT_S})
  --time-limit S   stop reducing after S seconds, keeping the best so far (default {DEFAULT_TIME_LIMIT_S})
  --bisect         then bisect the reduced program's check between the releases (--commits, --jax-repo DIR:
                   down to the commit), and add the range to the issue text
"""


@dataclass(frozen=True)
class Options:
    program: Path
    shown: str
    bad: str
    good: str
    out: Path
    op: str
    """``FILE:LINE`` as given ("" without ``--op``)."""
    op_line: int | None
    devices: int | None
    jobs: int
    timeout_s: int
    time_limit_s: int
    bisect: bool
    commits: bool
    jax_repo: str | None
    verbose: bool


def parse(matrix: Matrix, argv: Sequence[str], cwd: Path | None = None) -> Options:
    parser = Parser(prog="nox -s reduce --", tip=_TIP, allow_abbrev=False, add_help=False)
    parser.add_argument("program", nargs="?", default=None)
    parser.add_argument("--bad", default=None, metavar="R1")
    parser.add_argument("--good", default=None, metavar="R2")
    parser.add_argument("--out", default=None, metavar="DIR")
    parser.add_argument("--op", default=None, metavar="FILE:LINE")
    parser.add_argument("--devices", type=int, default=None, metavar="N")
    parser.add_argument("--jobs", type=int, default=DEFAULT_JOBS, metavar="N")
    parser.add_argument("--timeout", type=timeout_seconds, default=DEFAULT_TIMEOUT_S, metavar="SECONDS")
    parser.add_argument("--time-limit", type=timeout_seconds, default=DEFAULT_TIME_LIMIT_S, metavar="SECONDS")
    parser.add_argument("--bisect", action="store_true")
    parser.add_argument("--commits", action="store_true")
    parser.add_argument("--jax-repo", default=None, metavar="DIR")
    parser.add_argument("-v", "--verbose", action="store_true")
    parser.add_argument("--target", default=None, help=argparse.SUPPRESS)  # refused below, in one sentence
    parser.add_argument("--called-from", default=None, help=argparse.SUPPRESS)
    known = parser.parse_args(list(argv))
    if not known.program:
        raise UsageError("reduce needs a program", f"use: {USAGE}")
    if known.target:
        raise UsageError(f"reduce does not take --target ({known.target}): each candidate is judged by real runs, "
                         "and a chip this machine lacks runs nothing", "reduce on this machine's CPU (with --op for a "
                         "sharded op), then explain the reduced program for the chip: nox -s explain -- "
                         f"PROGRAM_min.py --releases R1,R2 --target {known.target}")
    folder = Path(known.called_from or cwd or os.getcwd())
    program = Path(os.path.abspath(folder / os.path.expanduser(known.program)))
    problem = file_problem(program)
    if problem:
        raise UsageError(f"the program {known.program} {problem}", "give the path of a Python file, as you run it")
    _parses(program, known.program)
    for flag, value in (("--bad", known.bad), ("--good", known.good), ("--out", known.out)):
        if not value:
            raise UsageError(f"reduce needs {flag}", f"use: {USAGE}")
    bad, good = (_release(matrix, value, flag) for flag, value in (("--bad", known.bad), ("--good", known.good)))
    if bad == good:
        raise UsageError(f"--bad and --good are the same release ({bad})", "give a release that shows the problem "
                         "and one that does not")
    if known.jobs < 1 or (known.devices is not None and known.devices < 1):
        raise UsageError("--jobs and --devices must be 1 or more", "e.g. --jobs 2 --devices 4")
    if known.commits and not known.bisect:
        raise UsageError("--commits goes with --bisect", "add --bisect")
    op_line = _op_line(known.op, program) if known.op else None
    devices = known.devices or (DEFAULT_OP_DEVICES if known.op else None)
    out = Path(os.path.abspath(folder / os.path.expanduser(known.out)))
    if out.exists() and not out.is_dir():
        raise UsageError(f"--out {known.out} is a file, not a folder", "give a folder (it is made if missing)")
    return Options(program, os.path.relpath(program, folder) if program.is_relative_to(folder) else program.name,
                   bad, good, out, known.op or "", op_line, devices, known.jobs, known.timeout, known.time_limit,
                   known.bisect, known.commits, known.jax_repo, known.verbose)


def _parses(program: Path, shown: str) -> None:
    try:
        ast.parse(program.read_text(encoding="utf-8"), filename=shown)
    except (SyntaxError, ValueError, UnicodeDecodeError) as error:
        raise UsageError(f"the program {shown} is not Python the kit can read ({error})",
                         "give the program as it runs with python PROGRAM") from None


def _release(matrix: Matrix, value: str, flag: str) -> str:
    return release_number(value, flag)


def _op_line(op: str, program: Path) -> int:
    """``FILE:LINE`` (or ``FILE:LINE:OP``) naming a line of the program."""
    parts = op.split(":")
    where, line = (parts[0], parts[1]) if len(parts) >= 2 else ("", "")
    if not line.isdigit():
        raise UsageError(f"--op {op!r} is not FILE:LINE", f"e.g. --op {program.name}:37")
    if Path(where).name != program.name:
        raise UsageError(f"--op {op!r} names another file than the program ({program.name})",
                         f"give a line of the program, e.g. --op {program.name}:{line}")
    count = len(program.read_text(encoding="utf-8").splitlines())
    if not 1 <= int(line) <= count:
        raise UsageError(f"--op {op!r}: the program has {count} lines", "give a line of the program")
    return int(line)
