"""The commands the kit answers itself (the drivers' commands live in their packages): run, plan, report.

``run CHECK VERSION`` (or ``--python PATH``, or an ``[[environment]]``): one
check in one environment, its summary printed and its exit code from its
record; ``plan VERSION``: the install plan, resolved without downloading
wheels; ``report``: reports/matrix.md and matrix.json rebuilt from the
records alone. `kit.cli` reads the command line and hands each its arguments.
"""

from __future__ import annotations

import argparse
import shlex
import time
from pathlib import Path
from typing import Mapping, Sequence

from repro import parameters as parameter_rules

from .arguments import Parser
from .atomic_files import atomic_write_text
from .check_settings import timeout_seconds
from .checks import builtin, builtin_checks
from .config import Matrix, configured_parameters, is_environment_name, release_number
from .errors import ConfigError, UsageError
from .exit_codes import EXIT_FAILED, EXIT_NOT_INSTALLABLE, EXIT_OK, EXIT_UNSUPPORTED
from .install import ExistingPython, InstallKey, ignored_settings_note, resolve_release
from .json_types import JsonObject
from .launch import LAUNCHERS
from .log_events import Log
from .config import catalogue_folders, legacy_known_problems
from .records import Record, Status, Verdict
from .reproduce_line import reproduce_text
from .requirements import requirements, versions_text
from .run.runner import RunRequest, parameters_for, run_check
from .targets import BACKENDS, Target, parse_target
from .user_paths import find_links_argument, folder_or_nothing_yet, folder_problem, interpreter_path
from .wording import as_spoken

_RUN_TIP = ("e.g. python -m kit run scaling 0.6.0 (a release), python -m kit run scaling --python VENV/bin/python "
            "(your own installation, as it is) or python -m kit run scaling NAME (an [[environment]] in matrix.toml)")


def cmd_run(matrix: Matrix, argv: Sequence[str], log: Log, reproduce: str | None = None) -> int:
    """``run CHECK VERSION``, ``run CHECK --python PATH`` or ``run CHECK ENVIRONMENT``, with options."""
    if argv[:1] in (["-h"], ["--help"]):  # help is an answer, not a mistake: exit 0
        print(f"usage: python -m kit run CHECK VERSION|ENVIRONMENT|--python PATH [options]\n{_RUN_TIP}; "
              "python -m kit run CHECK VERSION --help lists the check's options")
        return EXIT_OK
    if not argv or argv[0].startswith("-"):
        raise UsageError("run needs a check", _RUN_TIP)
    check_name = argv[0]
    matrix.check(check_name)  # ConfigError naming the known checks
    release_or_environment = argv[1] if len(argv) > 1 and not argv[1].startswith("-") else None
    args = run_parser(check_name).parse_args(list(argv[2 if release_or_environment is not None else 1:]))
    version, existing = run_where(matrix, release_or_environment, args)
    overrides = parameter_rules.given(check_name, args)  # parsed and in normal form
    compiled_for = target_from_flags(check_name, overrides, args.backend)
    request = RunRequest(
        check=check_name,
        version=version,
        # A target installs its compiler as the release's extra (jax[tpu]), and JAX then runs without its chip.
        backend=compiled_for.install_extra if compiled_for and existing is None else args.backend or "cpu",
        preset=args.preset,
        overrides=overrides,
        find_links=tuple(args.find_links),
        timeout_s=args.timeout,
        refresh=args.refresh,
        reproduce=reproduce_text(reproduce or "python -m kit run " + shlex.join(argv), matrix.path.parent),
        existing=existing,
        requires=requirements(args.requires, "--requires"),
        launcher=args.launcher, hosts=tuple(h for h in (args.hosts or "").split(",") if h),
        target=compiled_for,
    )
    parameters = parameters_for(matrix, request)  # bad parameters stop here, before any install
    record, path = run_check(matrix, request, log, parameters=parameters)
    print(as_spoken(summary(record, path)))
    return exit_code(record, args.fail_on_affected)


def target_from_flags(check: str, overrides: dict[str, object], backend: str | None) -> Target | None:
    """``--target NAME`` (``tpu:v5e:2x2``) taken out of the parsed flags as the Target it names, which the run request
    carries from here (`kit.run.runner.RunRequest.target`). None without ``--target``; UsageError naming the
    nearest name."""
    name = overrides.pop("target", None)
    if name is None:
        return None
    if isinstance(name, str) and name.lstrip().startswith("{"):  # already a target's JSON (a record's parameters)
        target = Target.from_json(parameter_rules.target_of(name) or {})
    else:
        target = parse_target(str(name))
    if not ((builtin_check := builtin(check)) and builtin_check.compiles_for_targets):
        targeted = [name for name, known in builtin_checks().items() if known.compiles_for_targets]
        raise UsageError(f"--target is for the {' and '.join(targeted)} check, not {check}",
                         f"e.g. nox -s {targeted[0]}-0.12.0.1 -- --target {target.name}")
    if backend not in (None, target.install_extra):
        raise UsageError(f"--target {target.name} installs the release for {target.install_extra} (its compiler) "
                         f"and runs nothing on {backend}", "drop --backend")
    return target


def run_where(matrix: Matrix, given: str | None, args: argparse.Namespace) -> tuple[str, ExistingPython | None]:
    """What ``run`` runs in: a release (its number), or an existing interpreter (and the release it must hold, or "").

    A name (a letter first) is an ``[[environment]]`` of matrix.toml; anything
    else must be a release number (``v0.6.0`` is refused as one); with
    ``--python`` the interpreter is the one given. Options that only
    shape an install (``--refresh``, ``--find-links``) mean nothing there and are refused.
    """
    python: Path | None = args.python
    if given is not None and is_environment_name(given):  # a letter first: never a release number
        named = matrix.environment(given)  # ConfigError: neither a release nor an environment
        if python is not None:
            raise UsageError(f"environment {named.name} already names its interpreter ({named.python})",
                             f"drop --python, or run python -m kit run CHECK --python {python} without the name")
        version, existing = "", ExistingPython(named.python, named.name, args.backend)
    elif python is not None:
        version = release_number(given, "version") if given is not None else ""
        existing = ExistingPython(python, None, args.backend)
    elif given is None:
        raise UsageError("run needs a check and a version, an [[environment]] name or --python PATH", _RUN_TIP)
    else:
        return release_number(given, "version"), None
    if args.refresh or args.find_links:
        raise UsageError(f"{'--refresh' if args.refresh else '--find-links'} shapes an install, and an existing "
                         "interpreter is used as it is", "drop it (nothing is resolved or installed there)")
    return version, existing


def cmd_plan(matrix: Matrix, argv: Sequence[str], log: Log) -> int:
    """Show how a release would be installed, resolving without downloading wheels.

    This is how a GPU plan (gigabytes of CUDA wheels) is checked on a machine
    without a GPU, or before queueing a cluster job.
    """
    parser = Parser(prog="nox -s plan --", tip=_TIP)
    parser.add_argument("version")
    parser.add_argument("--backend", default="cpu", choices=BACKENDS)
    parser.add_argument("--find-links", action="append", default=[], type=find_links_argument, metavar="DIR_OR_URL")
    parser.add_argument("--refresh", action="store_true", help="resolve again instead of reading the lock")
    args = parser.parse_args(list(argv))
    resolved = resolve_release(matrix, release_number(args.version, "version"),
                               InstallKey(args.backend, tuple(args.find_links)), refresh=args.refresh)
    plan, resolution = resolved.plan, resolved.resolution
    print(f"jax {plan.jax} for {plan.backend}: {' '.join(plan.requirements)}")
    if resolved.lock is not None:
        print(f"  as locked when its environment was built ({resolved.lock.path}, {resolved.lock.resolved_at}; "
              "--refresh resolves again)")
    print(f"  dependencies as of: {plan.exclude_newer or 'today (release not on the index)'}")
    for note in plan.notes:
        print(f"  note: {note}")
    ignored = ignored_settings_note() if resolved.lock is None else None
    if ignored:
        print(f"  note: {ignored}")
    if resolution is None:
        print(f"  NOT INSTALLABLE: {resolved.problem}")
        if resolved.attempts:
            print(f"  uv said: {resolved.attempts[-1].error}")
        print(f"  to supply wheels: {resolved.how_to_supply}")
        return EXIT_NOT_INSTALLABLE
    print(f"  python {resolution.python} resolves to:")
    for name, version in sorted(resolution.versions.items()):
        print(f"    {name}=={version}")
    return EXIT_OK


def cmd_report(matrix: Matrix, argv: Sequence[str], log: Log) -> int:
    """Rebuild reports/matrix.md and matrix.json (and the plots) from the records alone."""
    parser = Parser(prog="nox -s report --", tip=_TIP)
    parser.add_argument("--results", type=_records_folder, default=matrix.results_dir, help="folder of records")
    parser.add_argument("--out", type=_report_folder, default=matrix.layout.reports, help="where matrix.md/json go")
    parser.add_argument("--no-plots", action="store_true", help="skip the PNG plots")
    args = parser.parse_args(list(argv))
    if legacy_known_problems(matrix):
        log(legacy_known_problems(matrix))
    from .matrix.markdown import render_answer
    from .matrix.report import write_report
    from .matrix.reproduce import session_names

    start = time.perf_counter()
    result = write_report(args.results, args.out, plots=not args.no_plots, configured=_configured(matrix, log),
                          catalogue=catalogue_folders(matrix),
                          environments=[environment.name for environment in matrix.environments],
                          checks=tuple(matrix.checks),
                          # nox makes a session per check and release, and per check and [[environment]]
                          sessions=session_names(matrix.runnable_checks, [release.version for release in matrix.releases]
                                                 + [environment.name for environment in matrix.environments]))
    print(f"wrote {result.markdown} and {result.json} from {result.report.record_count} records "
          f"in {time.perf_counter() - start:.1f} s")
    print(f"wrote {write_timeline(catalogue_folders(matrix), args.out)}: the catalogue across releases")
    for path in result.plots:
        print(f"wrote {path}")
    for note in result.report.plot_notes:
        print(f"note: {note}")
    for line in render_answer(result.report)[2:]:
        if line.startswith("- **"):
            print(line)
    for unusable in result.unusable:
        log(f"skipped {unusable.path}: {unusable.reason}")
    return EXIT_OK


def write_timeline(folders: Sequence[Path], out: Path) -> Path:
    """known.md beside matrix.md: the catalogue's entries across the releases, from their kept measurements."""
    from .known.catalogue import load_catalogues
    from .known.timeline import render

    path = out / "known.md"
    atomic_write_text(path, render(load_catalogues(folders), folders))
    return path


def _records_folder(text: str) -> Path:
    """``report --results``: a folder that is there. A mistyped one holds no records, and the report of no
    records would replace a matrix.md of a hundred with "No records yet"."""
    problem = folder_problem(Path(text))
    if problem:
        raise UsageError(f"--results {text!r} {problem}: matrix.md and matrix.json were left as they were",
                         "give the folder of records (by default reports/results, [kit] results_dir in matrix.toml)")
    return Path(text)


def _report_folder(text: str) -> Path:
    """``report --out``: a folder, or nothing yet (it is made). A file there (``--out /etc/passwd``) was blamed on
    the disk ("File exists ... free some space")."""
    return folder_or_nothing_yet(Path(text), "--out", UsageError)


def _configured(matrix: Matrix, log: Log) -> dict[str, JsonObject]:
    """Per check, what `nox -s matrix` would run: a record counts in the matrix when it ran that."""
    configured = {}
    for name in matrix.checks:
        try:
            configured[name] = configured_parameters(matrix, name)
        except (OSError, ConfigError) as error:  # e.g. a check script that went missing: its records all count
            log(f"{name}: every record counts in the matrix ({error})")
    return configured


def exit_code(record: Mapping[str, object], fail_on_affected: bool) -> int:
    """The run's exit code, from its record (the object `run_check` wrote, read as a `Record`)."""
    ran = Record.of(record)
    status = ran.status
    if status is Status.NOT_INSTALLABLE:
        return EXIT_NOT_INSTALLABLE
    if status is Status.UNSUPPORTED:
        return EXIT_UNSUPPORTED
    if status is not Status.RAN:
        return EXIT_FAILED
    if fail_on_affected and ran.verdict is Verdict.AFFECTED:
        return EXIT_FAILED
    return EXIT_OK


_TIP = "see docs/install.md (options), or `nox -l`"


def run_parser(check: str) -> argparse.ArgumentParser:
    """``nox -s CHECK-VERSION --``'s options: the kit's own, then one per parameter, from the repro's rules."""
    parser = Parser(prog=f"nox -s {check}-VERSION --", tip=_TIP, add_help=True)
    parser.add_argument("--backend", default=None, choices=BACKENDS,
                        help="which build to install (default cpu); with --python: what that JAX must report")
    parser.add_argument("--python", type=interpreter_path, default=None, metavar="PATH",
                        help="run with this interpreter as it is: nothing resolved or installed, no index asked")
    parser.add_argument("--preset", default=None)
    parser.add_argument("--find-links", action="append", default=[], type=find_links_argument, metavar="DIR_OR_URL")
    parser.add_argument("--timeout", type=timeout_seconds, default=None, metavar="SECONDS",
                        help="time limit for the repro (default: timeout_s in matrix.toml)")
    parser.add_argument("--launcher", default=None, choices=tuple(LAUNCHERS),
                        help="how --processes N start (default local; srun inside a SLURM task): docs/cluster.md")
    parser.add_argument("--hosts", default=None, metavar="A,B", help="the hosts of --launcher ssh")
    parser.add_argument("--refresh", action="store_true",
                        help="resolve the install plan against the index again instead of using the lock")
    parser.add_argument("--fail-on-affected", action="store_true",
                        help="exit 1 when the verdict is affected (for other projects' CI)")
    parser.add_argument("--requires", action="append", default=[], metavar="PKG",
                        help="script checks: one more package the script imports, installed for the release's era "
                             "(repeatable; added to the check's requires)")
    parameter_rules.add_flags(parser, check)
    return parser


def summary(written: Mapping[str, object], path: Path) -> str:
    """The few lines a user reads after a run (also pasted into issues), from its record (the object `run_check`
    wrote, read as a `Record`)."""
    record = Record.of(written)
    requested, status, install = record.requested, record.status, record.install
    existing = install.get("environment") == "existing"
    head = f"{record.get('check')} · jax {requested.get('jax') or '(none)'} · {requested.get('backend')}"
    if existing:
        head += f" · {'environment ' + str(install['name']) if install.get('name') else 'existing interpreter'}"
    target = requested.get("target")
    if target:
        head += f" · compiled for {target.get('title') if isinstance(target, dict) else target}, not run"
    if status is Status.RAN:
        lines = [f"== {head}: {str(record.get('verdict')).upper()}", f"   {record.get('reason')}"]
        lines += _ran_lines(record)
    elif status is Status.NOT_INSTALLABLE and existing:
        lines = [f"== {head}: NO JAX RELEASE THERE", f"   {record.get('reason')}"]
    elif status is Status.NOT_INSTALLABLE:
        lines = [f"== {head}: NOT INSTALLABLE HERE", f"   {record.get('reason')}"]
        listed = install.get("neighbours") or []
        neighbours = [str(version) for version in listed] if isinstance(listed, list) else []
        if neighbours:
            lines.append("   installable neighbours: " + ", ".join(neighbours)
                         + f" (e.g. nox -s {record.get('check')}-{neighbours[0]})")
        # A target the release cannot compile for, or a missing package, wants another step than wheels.
        plain = not install.get("requires") and not requested.get("target")
        what = "to supply wheels" if plain or neighbours else "what to do"
        lines.append(f"   {what}: {install.get('how_to_supply')}")
    else:
        lines = [f"== {head}: {str(record.get('status')).upper()}", f"   {record.get('reason')}"]
    if existing:
        packages = install.get("packages") or {}
        counted = len(packages) if isinstance(packages, (dict, list)) else 0
        lines.append(f"   environment: existing, {install.get('interpreter')} as it is (Python {install.get('python')}, "
                     f"{counted} packages, fingerprint {install.get('packages_fingerprint')})")
    lines += [f"   record: {path}", f"   reproduce: {record.get('reproduce')}"]
    return "\n".join(lines)


def _ran_lines(written: Mapping[str, object]) -> list[str]:
    """Where a run ran and its key figures; nothing where it never started (a package it needs was missing)."""
    record = Record.of(written)
    env = record.environment
    if not env.get("backend") and not env.get("jax"):
        return []
    where = str(env.get("backend") or "an unreported backend")
    if env.get("compiled_for"):  # a target's devices: compiled for, never run on (repro/scaling_target.py)
        where = (f"{env['compiled_for']} ({env.get('device_kind')}), not run; compiled on "
                 f"{env.get('host_backend') or 'this machine'}")
    elif env.get("device_count") is not None:  # a script that reports no devices: say nothing rather than "× None"
        where += f" × {env.get('device_count')}" + (f" ({env['device_kind']})" if env.get("device_kind") else "")
    processes = env.get("process_count") or 1
    if isinstance(processes, (int, float)) and processes > 1:
        agree = "agree" if record.evidence.get("processes_agree") else "DISAGREE"
        where += f" over {env['process_count']} processes (jax.distributed; their verdicts {agree})"
    packages = env.get("packages")
    extras = (f", {versions_text({str(k): str(v) if v else None for k, v in packages.items()})}"
              if packages and isinstance(packages, dict) else "")
    verb = "compiled for" if env.get("compiled_for") else "ran on"
    lines = [f"   {verb} {where}, jax {env.get('jax')}, jaxlib {env.get('jaxlib')}, numpy {env.get('numpy')}, "
             f"python {env.get('python')}{extras}"]
    figures = record.evidence.get("summary") or {}
    if figures and isinstance(figures, dict):
        lines.append("   key figures: " + ", ".join(f"{k}={_fmt(v)}" for k, v in figures.items()))
    return lines


def _fmt(value: object) -> str:
    if isinstance(value, float):
        return f"{value:.3g}"
    return str(value)
