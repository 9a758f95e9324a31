"""``nox -s triage -- ISSUE.md [--issue OWNER/REPO#N] [--block N] [--run] [--commits --jax-repo PATH]``.

Prints what it read, runs the check it wrote, and ends with the answer and the
bisect command; with ``--run`` the command line runs that bisect next (this
module hands it back: the drivers do not import each other).
"""

from __future__ import annotations

import argparse
import shlex
from pathlib import Path
from typing import Sequence

from ..log_events import Log
from ..arguments import Parser
from ..config import Matrix, release_number
from ..check_settings import DEFAULT_TIMEOUT_S, timeout_seconds
from ..errors import UsageError
from ..reproduce_line import reproduce_text
from ..exit_codes import EXIT_OK
from .check_writer import is_check_name
from .issue_source import issue_page, read_file, read_github_issue
from .judged_runs import JudgedRun
from .triage import TriageOptions, answer_lines, triage



def make_parser() -> argparse.ArgumentParser:
    parser = Parser(prog="nox -s triage --", tip="see docs/triage.md, or nox -s triage -- --help", description=__doc__)
    parser.add_argument("report", nargs="?", type=Path, help="a bug report saved as markdown or text")
    parser.add_argument("--issue", metavar="OWNER/REPO#N", help="read the report from GitHub's API instead")
    parser.add_argument("--block", type=int, default=None, metavar="N", help="run the report's block N (from 1)")
    parser.add_argument("--name", default=None, type=_check_name,
                        help="the check's name: letters, digits, - and _ (default: from the report's file name)")
    parser.add_argument("--checks-dir", type=Path, default=None, metavar="DIR",
                        help="where to write NAME.py (default: checks/ beside matrix.toml)")
    parser.add_argument("--reported", default="", metavar="VERSION", help="the release the reporter ran")
    parser.add_argument("--good", default="", metavar="VERSION", help="a release where it worked")
    parser.add_argument("--newest", default="", metavar="VERSION", help="compare with this release, not the newest")
    parser.add_argument("--yes", action="store_true",
                        help="with --issue: you have read the issue, and its code may run here")
    parser.add_argument("--host-devices", type=_host_devices, default=None, metavar="N",
                        help="CPU runs get N forced host devices (default: as many as the report's code asks for)")
    parser.add_argument("--timeout", type=timeout_seconds, default=DEFAULT_TIMEOUT_S, metavar="SECONDS",
                        help=f"stop each run of the block after this long (default {DEFAULT_TIMEOUT_S})")
    parser.add_argument("-v", "--verbose", action="store_true", help="show the runs' output (tracebacks) too")
    parser.add_argument("--run", action="store_true", help="run the bisect it proposes")
    parser.add_argument("--commits", action="store_true", help="the bisect goes on to the JAX commit")
    parser.add_argument("--jax-repo", type=Path, default=None, metavar="PATH", help="a clone of JAX for --commits")
    return parser


def main(matrix: Matrix, argv: Sequence[str], log: Log,
         reproduce: str = "") -> tuple[int, list[str] | None, list[JudgedRun]]:
    """Triage one report; the exit code and, with ``--run`` and a bisect to run, that bisect's arguments and
    triage's runs judged by its check (its probes of those releases, kit/triage/judged_runs.py)."""
    args = make_parser().parse_args(list(argv))
    if (args.report is None) == (args.issue is None):
        raise UsageError("triage needs one report: a file, or --issue OWNER/REPO#N",
                         "e.g. nox -s triage -- issue.md, or nox -s triage -- --issue jax-ml/jax#25329")
    if args.issue and not args.yes:
        # The report's code runs on this machine as this user; a GitHub issue is a stranger's code nobody here read.
        raise UsageError(f"--issue {args.issue} would run the code of an issue nobody has read here: triage runs "
                         "the report's Python block on this machine, as you",
                         f"read it on {issue_page(args.issue)} first, then add --yes")
    source = read_github_issue(args.issue) if args.issue else read_file(args.report, matrix.path.parent)
    options = TriageOptions(
        source=source.source, key=source.key, text=source.text, block=args.block, name=args.name or "",
        checks_dir=args.checks_dir,
        reported=_release(args.reported, "--reported"), good=_release(args.good, "--good"),
        newest=_release(args.newest, "--newest"), commits=args.commits, jax_repo=args.jax_repo,
        reproduce=shown_command(reproduce or "python -m kit triage " + shlex.join(argv), matrix.path.parent),
        host_devices=args.host_devices,
        verbose=args.verbose, timeout_s=args.timeout)
    result = triage(matrix, options, log)
    print("\n".join(answer_lines(result)), flush=True)
    if not (args.run and result.bisect_argv):
        return EXIT_OK, None, []
    argv_run = list(result.bisect_argv)
    argv_run[1] = str(result.check.path)  # the printed command names it relative to the project
    if "--jax-repo" in argv_run and args.jax_repo is not None:  # ... and a clone outside it by a placeholder
        argv_run[argv_run.index("--jax-repo") + 1] = str(args.jax_repo)
    return EXIT_OK, argv_run, list(result.judged_runs)


def shown_command(command: str, project: Path) -> str:
    """``command`` as records and reports quote it (`kit.reproduce_line.reproduce_text`): each absolute path relative
    to the project, ``~/...`` or a placeholder (``--jax-repo <JAX_REPO>``), every word quoted."""
    return reproduce_text(command, project)


def _check_name(text: str) -> str:
    """``--name`` becomes ``checks/NAME.py``: a name by the one rule every check's name follows, never a path."""
    if not is_check_name(text):
        raise argparse.ArgumentTypeError(f"{text!r} is not a check name: use ASCII letters, digits, - and _ "
                                         "(starting with a letter or digit); it names checks/NAME.py")
    return text


def _host_devices(text: str) -> int:
    if not text.isdigit() or not 1 <= int(text) <= 4096:
        raise argparse.ArgumentTypeError(f"must be a whole number of devices from 1 to 4096, got {text!r}")
    return int(text)


def _release(text: str, where: str) -> str:
    return release_number(text, where) if text else ""
