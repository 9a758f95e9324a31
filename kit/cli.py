"""Command line: ``python -m kit run CHECK VERSION [options]`` and friends.

``run CHECK --python PATH`` runs the check with that interpreter as it is
(nothing resolved or installed, no index asked); ``run CHECK NAME`` with an
``[[environment]]`` of matrix.toml. A VERSION given with ``--python`` is what
that interpreter must hold (``nox -s scaling-0.4.35 -- --python P``).

The nox sessions are thin wrappers around these commands, so everything a
session does can also be run (and tested) without nox. Exit codes:

* 0 — the check ran (whatever its verdict);
* 1 — the check crashed, timed out or refused a size that does not fit, or
  ``--fail-on-affected`` and it is affected, or a file could not be written
  (disk full: the message says where the record was kept instead);
* 2 — bad input (a mistyped version, option or matrix.toml key): one ERROR line;
* 3 — the release is not installable here (a record says why);
* 4 — the package index could not be reached and the release's environment
  is not built yet (nothing ran, no record: the network says nothing about
  the release);
* 5 — the release cannot run what was asked here, e.g. ``--processes 2`` on a
  release whose CPU client has no cross-process collectives (a record says why).

``explain PROGRAM [ARGS...] [--releases A,B]`` says which op of a program is not split across devices (docs/explain.md).
``triage REPORT [--run]`` writes a check from a bug report and says where it reproduces (docs/triage.md).
``reduce PROGRAM --bad R1 --good R2 --out DIR`` cuts a program down to the smallest that still shows its problem (docs/reduce.md).
``probe JOB_DIR TASK`` is one probe of ``bisect --slurm``, run by its job script on a node.
``plan VERSION [--backend cuda]`` shows the install plan, resolved without
downloading wheels. ``report [--results DIR] [--out DIR] [--no-plots]``
rebuilds reports/matrix.md and matrix.json from the records alone.

``jax-kit`` (the installed command, `entry`) runs the same commands from the
user's own folder (kit/project.py): ``jax-kit scaling 0.6.0`` for ``run scaling 0.6.0``.
"""

from __future__ import annotations

import os
import shlex
import signal
import sys
import threading
from contextlib import contextmanager
from types import FrameType
from typing import Iterator, Sequence

# The docstring above is `--help`'s text. The run, plan and report handlers are in kit/commands.py, the drivers'
# commands in their packages; this module reads the command line and hands each command its arguments.
from .commands import cmd_plan, cmd_report, cmd_run
from .config import Matrix, is_release_number, load_matrix
from .errors import KitError, UsageError, out_of_files, unusable_file
from .exit_codes import EXIT_INTERRUPTED, EXIT_OK
from .inert_console import inert_log, inert_streams
from .log_events import Log
from .wording import AS_JAX_KIT, as_spoken


def _log(message: str) -> None:
    print(f"kit: {message}", file=sys.stderr, flush=True)


def main(argv: Sequence[str] | None = None, log: Log = _log, matrix_path: str = "matrix.toml",
         reproduce: str | None = None, project: bool = False) -> int:
    """Run one command; a `KitError` becomes one ERROR line and a TIP, exit 2.

    ``project``: as the ``jax-kit`` command, from the current folder (kit/project.py), not from matrix_path.
    """
    argv = list(sys.argv[1:] if argv is None else argv)
    log = inert_log(log)  # a program's exit message, a record's reason, a file name: shown, never obeyed
    with unwind_on_stop_signals(), inert_streams():
        try:
            return _project_main(argv, log) if project else _main(argv, log, matrix_path, reproduce)
        except KeyboardInterrupt:
            # Each layer has cleaned up on the way here (a check's process group, its temp folder); a record
            # is written whole or not at all, so what was written stays. A sweep says more itself and returns.
            print(interrupted_line(argv), file=sys.stderr)
            return EXIT_INTERRUPTED
        except StopSignal as stop:  # SIGTERM or SIGHUP: unwound as Ctrl-C is, and said as it is (was: silent)
            print(interrupted_line(argv, stop.name), file=sys.stderr)
            return stop.status
        except BrokenPipeError:
            # The reader went away (`jax-kit known | head`): as a shell tool does, stop quietly; Python's own
            # flush at exit would print a second traceback, so standard output goes to /dev/null first.
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            return EXIT_BROKEN_PIPE


EXIT_BROKEN_PIPE = 128 + 13
"""Killed by SIGPIPE, as a shell says it: what ``head`` leaves a writer."""

INTERRUPTED = "interrupted (Ctrl-C): every record written before it is kept, and the run it stopped wrote none"
RESUMING = ("matrix", "bisect")
VALUED = ("--config", "--out")
"""``jax-kit``'s own options that take a value before the command."""
"""Commands that skip what is already answered (current cells, cached probes) when given again."""


def interrupted_line(argv: Sequence[str], signal_name: str = "") -> str:
    """The Ctrl-C sentence (or SIGTERM's, SIGHUP's): whether the same command again carries on or starts over (an
    audit, a check, an explain or a triage runs everything again; the matrix and a bisect skip what they answered)."""
    words = [w for i, w in enumerate(argv) if not w.startswith("-") and (i == 0 or argv[i - 1] not in VALUED)]
    command = words[0] if words else ""
    again = "carries on from there" if command in RESUMING else "starts it over"
    said = INTERRUPTED.replace("interrupted (Ctrl-C)", f"stopped by {signal_name}") if signal_name else INTERRUPTED
    return f"{said}; the same command again {again}"


class StopSignal(SystemExit):
    """SIGTERM or SIGHUP, raised where the kit stands: it unwinds as Ctrl-C does, and exits 128 + the signal."""

    def __init__(self, signum: int) -> None:
        super().__init__(128 + signum)
        self.status = 128 + signum
        self.name = signal.Signals(signum).name


def entry() -> None:
    """The ``jax-kit`` console command (pyproject.toml's ``[project.scripts]``)."""
    sys.exit(main(project=True))


def _project_main(argv: list[str], log: Log) -> int:
    """``jax-kit [--config FILE] [--out DIR] COMMAND ...``: ``CHECK VERSION`` is ``run CHECK VERSION``, and
    ``matrix`` is followed by the report, as the repository's sessions do."""
    from . import __version__
    from .project import USAGE, project_matrix, project_options

    try:
        options = project_options(argv)
        if not options.argv or options.argv[0] in ("-h", "--help"):
            print(USAGE)
            return EXIT_OK
        if options.argv[0] == "--version":
            print(f"jax-kit {__version__}")
            return EXIT_OK
        matrix = project_matrix(options)
    except KitError as exc:
        print(exc.render(), file=sys.stderr)
        return exc.exit_code
    command = list(options.argv)
    if command[0] in matrix.runnable_checks:
        command = ["run", *command]
    spoken = AS_JAX_KIT.set(True)
    try:
        code = _main(command, log, "", "jax-kit " + shlex.join(argv), matrix)
        if command[0] == "matrix" and code == EXIT_OK:
            code = _main(["report"], log, "", None, matrix)
    finally:
        AS_JAX_KIT.reset(spoken)
    return code


def _main(argv: list[str], log: Log, matrix_path: str, reproduce: str | None, given: Matrix | None = None) -> int:
    try:
        if not argv or argv[0] in ("-h", "--help"):
            print(__doc__)
            return EXIT_OK
        command, rest = argv[0], argv[1:]
        matrix = given or load_matrix(matrix_path)
        if matrix.results_outside and command not in ("plan", "probe"):
            log(matrix.results_outside)  # before anything is written there
        if command == "run":
            return cmd_run(matrix, rest, log, reproduce=reproduce)
        if command == "report":
            return cmd_report(matrix, rest, log)
        if command == "plan":
            return cmd_plan(matrix, rest, log)
        if command == "bisect":
            from .bisect import main as bisect_main

            return bisect_main(matrix, rest, log)
        if command == "matrix":
            from .matrix.sweep import main as sweep_main

            return sweep_main(matrix, rest, log)
        if command == "triage":
            return cmd_triage(matrix, rest, log, reproduce)
        if command == "explain":  # which op of a program is not split across devices (docs/explain.md)
            from .explain import main as explain_main

            return explain_main(matrix, rest, log, reproduce or "")
        if command == "reduce":  # the smallest program that still shows a problem, and its issue (docs/reduce.md)
            return cmd_reduce(matrix, rest, log)
        if command in ("known", "audit"):  # the catalogue of known problems (docs/known.md)
            from .known.command import audit_main, known_main

            return (known_main if command == "known" else audit_main)(matrix, rest, log)
        if command == "probe":  # one task of `bisect --slurm`'s job array, on a node
            from .bisect import run_task

            return run_task(matrix, rest, log)
        raise UsageError(f"unknown command {command!r}", "use: run, plan, bisect, triage, explain, reduce, matrix, report, known or audit")
    except KitError as exc:
        print(as_spoken(exc.render()), file=sys.stderr)
        return exc.exit_code
    except OSError as exc:
        # Wherever the limit hit (a pipe, a thread's file) or a folder refused a file: one sentence, no traceback.
        fault = out_of_files(exc) or unusable_file(exc)
        if fault is None:
            raise
        print(fault.render(), file=sys.stderr)
        return fault.exit_code


def cmd_reduce(matrix: Matrix, argv: Sequence[str], log: Log) -> int:
    """``reduce PROGRAM``: the minimal reproducer and its issue; ``--bisect`` bisects its check next (the drivers do
    not import each other) and the bisect's summary is added to the issue text."""
    from .reduce import add_bisect, main as reduce_main

    code, bisect_argv, issue = reduce_main(matrix, argv, log)
    if bisect_argv is None or issue is None:
        return code
    from .bisect import main as bisect_main

    folder = issue.parent / "bisect"
    bisected = bisect_main(matrix, [*bisect_argv, "--out", str(folder)], log)
    add_bisect(issue, folder, bisect_argv)
    return code or bisected


def cmd_triage(matrix: Matrix, argv: Sequence[str], log: Log, reproduce: str | None) -> int:
    """``triage REPORT``: a check from a bug report, run where reported and on the newest; ``--run`` bisects next."""
    from .triage.command import main as triage_main

    code, bisect_argv, judged = triage_main(matrix, argv, log, reproduce or "")
    if bisect_argv is None:
        return code
    from .bisect import main as bisect_main

    return bisect_main(matrix, bisect_argv, log, judged)  # triage's runs, judged by the check: probes of theirs


@contextmanager
def unwind_on_stop_signals() -> Iterator[None]:
    """SIGTERM and SIGHUP stop the kit the way Ctrl-C does, instead of killing it where it stands.

    So the repro's process group is killed with it and its temp folder is
    removed (a batch scheduler's SIGTERM or a closed terminal would otherwise
    leave both behind); records already written stay. Exit 128 + the signal.
    """
    if threading.current_thread() is not threading.main_thread():
        yield  # only the main thread may set handlers
        return

    def stop(signum: int, frame: FrameType | None) -> None:
        raise StopSignal(signum)

    previous = {sig: signal.signal(sig, stop) for sig in (signal.SIGTERM, signal.SIGHUP)}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def unknown_session_hints(matrix: Matrix, argv: Sequence[str]) -> list[str]:
    """What to say about ``nox -s scaling-9.9.9`` when 9.9.9 is no [[release]] in matrix.toml.

    nox only says "Sessions not found" and offers no hook for unknown names,
    so the noxfile, which nox imports first, prints these lines from its argv.
    """
    known = {release.version for release in matrix.releases} | {env.name for env in matrix.environments}
    hints = []
    for name in _requested_sessions(argv):
        check, _, version = name.partition("-")
        if check not in matrix.runnable_checks or not version or version in known:
            continue
        if is_release_number(version):
            hints.append(f"kit: there is no session {name}: jax {version} is not a [[release]] in matrix.toml. "
                         f"Add one there (README: Adding a release or a check), or run it once without the matrix: "
                         f"python -m kit run {check} {version}")
        else:
            hints.append(f"kit: there is no session {name}: {version} is not an [[environment]] in matrix.toml. "
                         f"Add one there (docs/tour.md: Is my installation affected?), or run it once with "
                         f"python -m kit run {check} --python PATH")
    return hints


def _requested_sessions(argv: Sequence[str]) -> list[str]:
    names, taking = [], False
    for arg in argv:
        if arg == "--":
            break
        if arg in ("-s", "-e", "--session", "--sessions"):
            taking = True
        elif arg.startswith(("--session=", "--sessions=")):
            names.append(arg.split("=", 1)[1])
        elif arg.startswith("-"):
            taking = False
        elif taking:
            names.append(arg)
    return [part for name in names for part in name.split(",") if part]


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
