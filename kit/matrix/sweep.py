"""``nox -s matrix``: every check on every release in matrix.toml, one record each.

The sweep is resumable by design. Records are written one by one (atomically,
by `kit.run.runner`), and before running anything the sweep asks of each cell
(release × check) whether its newest record is still current: same kit
version and the same identity (kit/records/identity.py: parameters, every
installed package, hardware, JAX/XLA variables). That question is
answered from install *plans* alone (uv resolves metadata, installs nothing),
so a warm matrix where every cell is current finishes in seconds to a minute
and a Ctrl-C costs only the cell that was running.

    nox -s matrix -- [--backend cpu|cuda | --target tpu:v5e:2x2] [--only 0.4.16,0.6.2] [--checks scaling]
                     [--rerun | --rerun-check scaling] [--timeout S] [--strict] [--refresh]
                     [--slurm [--partition P] [--time T] [--no-wait]]   (kit/matrix/slurm.py)

``--target T`` (and ``[kit] targets`` in matrix.toml, swept after the backend's
cells) sweeps a chip this machine lacks: the checks that compile for it, each
record for that chip (kit/matrix/target_cells.py).

Exit codes: 0 when the sweep completed (whatever the verdicts); 1 when a
cell's record could not be written (a read-only or full results folder: the
sweep stops there, the record is kept aside and the message says where), and
with ``--strict`` when a cell crashed, timed out or met an unexpected error;
130 after Ctrl-C.
"""

from __future__ import annotations

import dataclasses
import time
import traceback
from dataclasses import dataclass
from typing import Mapping, Sequence

from packaging.version import Version

from ..log_events import Log
from .. import records
from . import slurm
from ..arguments import Parser
from ..config import BACKENDS, Matrix, configured_processes, release_number
from ..check_settings import timeout_seconds
from ..errors import ConfigError, KitError, StorageError, UsageError
from ..exit_codes import EXIT_FAILED, EXIT_INTERRUPTED, EXIT_OK
from ..install import InstallKey, open_index, PackageIndex, Prefetch, Prepared, ResolvedRelease
from ..run.facts import identity_here, job_label
from ..run.runner import RunRequest, check_for, check_subject, prepare, run_check
from ..targets import Target, parse_target
from .target_cells import cell_parameters, takes_target, unplanned_identity, untested
from .progress import Progress, clock_text
from ..slurm.jobs import SlurmOptions, require_controller, require_sbatch
from ..slurm.task_output import TaskEnd
from .cell import Cell, CellResult
from .closing_table import FAILED, count_cells, render_table
from .release_plans import plan_releases


@dataclass(frozen=True)
class SweepOptions:
    backend: str = "cpu"
    only: tuple[str, ...] = ()
    checks: tuple[str, ...] = ()
    rerun: bool = False
    rerun_checks: tuple[str, ...] = ()
    timeout_s: int | None = None
    strict: bool = False
    refresh: bool = False
    slurm: SlurmOptions | None = None  # submit the pending cells as a SLURM job array (kit/matrix/slurm.py)
    project: bool = False  # the jax-kit command's (kit/project.py): records say `jax-kit CHECK VERSION`
    targets: tuple[Target, ...] = ()  # chips compiled for, not run (--target, else matrix.toml's [kit] targets)
    on_backend: bool = True  # the backend's own cells too (False with --target: that chip alone)


# --------------------------------------------------------------------------
# Entry point


def main(matrix: Matrix, argv: Sequence[str], log: Log) -> int:
    """Run the matrix; see the module docstring for options and exit codes."""
    options = parse_options(matrix, argv)
    if options.slurm:  # before anything is planned or built: a missing cluster is said in a second
        require_sbatch()
        require_controller()
    cells = select_cells(matrix, options)
    index = open_index(matrix)
    started = time.monotonic()
    sweep = Sweep(matrix, options, index, log)
    try:
        where = ([f"on {options.backend}"] if options.on_backend else []) + [f"for {t.name}" for t in options.targets]
        log(f"sweeping {count_cells(len(cells))} {' and '.join(where)}; checking which records are current "
            "(install plans only, nothing is installed)")
        for said in target_notes(matrix, options):
            log(said)
        current = current_cells(matrix, cells, options, index, log)
        log(f"{len(current)} of {len(cells)} cells are current ({clock_text(time.monotonic() - started)}); "
            f"{len(cells) - len(current)} to run")
        if options.slurm:
            sweep.run_on_slurm(cells, current, options.slurm)
        else:
            sweep.run(cells, current)
    except KeyboardInterrupt:
        # Records are written one by one, atomically: everything done so far stays.
        left = [cell for cell in cells if cell not in sweep.done]
        log(f"interrupted: {count_cells(len(sweep.done))} done (their records are kept), {len(left)} left: "
            + ", ".join(str(cell) for cell in left))
        print(render_table(sweep.outcomes))
        return EXIT_INTERRUPTED
    print(render_table(sweep.outcomes))
    for said in target_notes(matrix, options):
        print(said)
    if sweep.unsaved is not None:
        left = [cell for cell in cells if cell not in sweep.done]
        log(f"matrix FAILED after {clock_text(time.monotonic() - started)}: {sweep.unsaved.stops}, so the "
            f"sweep stopped with {count_cells(len(left))} not run; TIP: {sweep.unsaved.tip}")
        return EXIT_FAILED
    log(f"matrix done in {clock_text(time.monotonic() - started)}")
    return exit_code(sweep.outcomes, options.strict)


def exit_code(outcomes: Sequence[CellResult], strict: bool) -> int:
    if any(outcome.status == "unsaved" for outcome in outcomes):
        return EXIT_FAILED  # a sweep that could not keep a record is no success, strict or not
    if strict and any(outcome.status in FAILED for outcome in outcomes):
        return EXIT_FAILED
    return EXIT_OK


# --------------------------------------------------------------------------
# SweepOptions and cells


def parse_options(matrix: Matrix, argv: Sequence[str]) -> SweepOptions:
    """The command line, checked against matrix.toml (unknown names are usage errors)."""
    parser = Parser(prog="nox -s matrix --", tip="see `nox -s matrix -- --help` for the options", description="Every check on every release in matrix.toml.")
    parser.add_argument("--backend", default=None, choices=BACKENDS)
    parser.add_argument("--target", action="append", default=[], metavar="TARGET",
                        help="sweep only this chip, compiled for and not run (tpu:v5e:2x2; docs/targets.md)")
    parser.add_argument("--only", action="append", default=[], metavar="VERSION[,..]",
                        help="sweep only these releases")
    parser.add_argument("--checks", action="append", default=[], metavar="NAME[,..]",
                        help="sweep only these checks")
    parser.add_argument("--rerun", action="store_true", help="run every selected cell, current or not")
    parser.add_argument("--rerun-check", action="append", default=[], metavar="NAME[,..]",
                        help="run this check's cells even when current")
    parser.add_argument("--timeout", type=timeout_seconds, default=None, metavar="SECONDS",
                        help="per-cell limit instead of matrix.toml's timeout_s")
    parser.add_argument("--strict", action="store_true", help="exit 1 if a cell crashed or timed out")
    parser.add_argument("--refresh", action="store_true",
                        help="resolve every release against the index again instead of using the locks")
    parser.add_argument("--slurm", action="store_true", help="run the pending cells as one SLURM job array")
    parser.add_argument("--partition", default=None, help="--slurm: the partition to submit to")
    parser.add_argument("--time", default=None, metavar="LIMIT", help="--slurm: time limit per array task")
    parser.add_argument("--no-wait", action="store_true", help="--slurm: print the job id and return")
    args = parser.parse_args(list(argv))
    if not args.slurm and (args.partition or args.time or args.no_wait):
        raise UsageError("--partition, --time and --no-wait go with --slurm", "add --slurm, or drop them")
    for flag, given in (("--only", args.only), ("--checks", args.checks), ("--rerun-check", args.rerun_check)):
        if given and not _split(given):  # `--only "$RELEASE"` with the variable unset swept every release
            raise UsageError(f"{flag} {given[-1]!r} names nothing", f"give {flag} a comma-separated list, or leave it out")
    checks = _split(args.checks)
    rerun_checks = _split(args.rerun_check)
    for name in (*checks, *rerun_checks):
        matrix.check(name)  # ConfigError naming the known checks
    targets = tuple(dict.fromkeys(parse_target(name) for name in args.target)) or matrix.targets
    if args.target and args.backend:
        raise UsageError(f"--target {args.target[0]} sweeps that chip alone, compiled for it here: --backend "
                         f"{args.backend} would run nothing", "drop --backend, or run the sweep twice")
    if targets and args.slurm:
        raise UsageError("--slurm does not take targets yet: a target's compiles take seconds here",
                         "drop --slurm for the target's sweep" + ("" if args.target else
                                                                 " (matrix.toml's [kit] targets are swept too)"))
    return SweepOptions(
        backend=args.backend or "cpu",
        only=tuple(_matrix_version(matrix, v) for v in _split(args.only)),
        checks=checks,
        rerun=args.rerun,
        rerun_checks=rerun_checks,
        timeout_s=args.timeout,
        strict=args.strict,
        refresh=args.refresh,
        slurm=SlurmOptions(args.partition, args.time, not args.no_wait) if args.slurm else None,
        project=matrix.shared_dir is not None,
        targets=targets,
        on_backend=not args.target,
    )


def _split(values: Sequence[str]) -> tuple[str, ...]:
    return tuple(part.strip() for value in values for part in value.split(",") if part.strip())


def _matrix_version(matrix: Matrix, version: str) -> str:
    """matrix.toml's spelling of ``version``; the matrix only sweeps what it lists."""
    known = [release.version for release in matrix.releases]
    wanted = Version(release_number(version, "--only"))
    for release in matrix.releases:
        if release.key == wanted:
            return release.version
    # nox makes sessions only for matrix.toml's releases, so a one-off run of another goes through the kit itself.
    check = next(iter(matrix.checks), "scaling")
    raise UsageError(f"--only {version}: not a release in matrix.toml",
                     f"use one of {', '.join(known)}, add a [[release]] for it (README: Adding a release or a check), "
                     f"or run it once without the matrix: python -m kit run {check} {version}")


def select_cells(matrix: Matrix, options: SweepOptions) -> list[Cell]:
    """Releases oldest first, each release's checks together (they share one environment); the backend's
    cells, then each target's, of the checks that compile for it (`target_notes` says what the rest leave)."""
    lanes: list[Target | None] = [None] if options.on_backend else []
    return [
        Cell(release.version, check, target)
        for target in [*lanes, *options.targets]
        for release in matrix.releases
        if not options.only or release.version in options.only
        for check in matrix.checks
        if (not options.checks or check in options.checks)
        and (target is None or takes_target(matrix.check(check)))
    ]


def target_notes(matrix: Matrix, options: SweepOptions) -> list[str]:
    """Per target, what its cells answer and which checks stay untested there (they need the chip to run)."""
    checks = [check for check in matrix.checks if not options.checks or check in options.checks]
    return [f"{target.name}: {said}" for target in options.targets for said in untested(matrix, target, checks)]


# --------------------------------------------------------------------------
# Which cells are current


def current_cells(matrix: Matrix, cells: Sequence[Cell], options: SweepOptions, index: PackageIndex,
                  log: Log) -> dict[Cell, records.Record]:
    """The cells whose newest record of matrix.toml's parameters on this machine would not change if run
    again, with it (an ad-hoc record of the same cell neither counts nor gets in the way)."""
    current: dict[Cell, records.Record] = {}
    for target in dict.fromkeys(cell.target for cell in cells):  # the backend's cells, then each target's
        wanted = [cell for cell in cells if cell.target == target and not _forced(cell, options)]
        if wanted:
            current.update(_current_for(matrix, wanted, target, options, index, log))
    return current


def _current_for(matrix: Matrix, wanted: Sequence[Cell], target: Target | None, options: SweepOptions,
                 index: PackageIndex, log: Log) -> dict[Cell, records.Record]:
    """`current_cells` of the backend's cells (``target`` None) or of one target's: its records alone count."""
    backend = target.install_extra if target else options.backend
    configured = {check: cell_parameters(matrix, check, target) for check in {cell.check for cell in wanted}}
    newest = records.newest_records_here(matrix.results_dir, backend, configured)
    found = {cell: newest[(cell.check, cell.version)] for cell in wanted if (cell.check, cell.version) in newest}
    # Only releases with a record are worth resolving: the rest run anyway. A check with extra packages
    # has its own plan of each release (its requirements are in the environment's fingerprint). A release
    # too old for the target has no plan to make: its record says so whatever the index holds.
    plans: dict[tuple[str, ...], dict[str, ResolvedRelease | None]] = {}
    for requires in sorted({matrix.check(cell.check).requires for cell in found}):
        versions = sorted({cell.version for cell in found
                           if matrix.check(cell.check).requires == requires and not cell.too_old}, key=Version)
        plans[requires] = plan_releases(matrix, versions, backend, index, log, options.refresh, requires)
    return {cell: record for cell, record in found.items()
            if _is_current(record, configured[cell.check],
                           plans[matrix.check(cell.check).requires].get(cell.version), cell, options)}


def _forced(cell: Cell, options: SweepOptions) -> bool:
    return options.rerun or cell.check in options.rerun_checks


def _is_current(record: records.Record, parameters: Mapping[str, object], release: ResolvedRelease | None,
                cell: Cell, options: SweepOptions) -> bool:
    """The record's identity is this run's: same check and parameters, install, hardware and JAX/XLA variables."""
    request = _request(cell, options)
    if cell.too_old and cell.target is not None:
        return records.is_current(record, unplanned_identity(check_subject(request, parameters), cell.version,
                                                             cell.target))
    if release is None:
        return False
    here = identity_here(subject=check_subject(request, parameters), jax=cell.version, backend=request.backend,
                         python=release.python, packages=release.versions, requirements=release.plan.requirements,
                         exclude_newer=release.plan.exclude_newer)
    if options.slurm and record.slurm:
        # The nodes' hardware is known only on the nodes: a record one of them made stands for the cluster's.
        earlier = records.record_identity(record)
        here = dataclasses.replace(here, hardware=earlier.hardware) if earlier else here
    return records.is_current(record, here)


# --------------------------------------------------------------------------
# Running


class Sweep:
    """Runs the cells that are not current, one environment per release."""

    def __init__(self, matrix: Matrix, options: SweepOptions, index: PackageIndex, log: Log) -> None:
        self.matrix = matrix
        self.options = options
        self.index = index
        self.log = log
        self.outcomes: list[CellResult] = []
        self.done: set[Cell] = set()
        self._prepared: dict[tuple[str, tuple[str, ...], str], Prepared] = {}
        self.unsaved: StorageError | None = None
        """Why the sweep stopped early: a record it could not write (every later one would fail the same way)."""

    def run(self, cells: Sequence[Cell], current: Mapping[Cell, records.Record]) -> None:
        progress = Progress(sum(1 for cell in cells if cell not in current))
        ahead = self._resolve_ahead([cell for cell in cells if cell not in current])
        try:
            self._run_cells(cells, current, progress)
        finally:
            ahead.close(wait=False)  # a resolution under way for a cell not reached is not waited for

    def _resolve_ahead(self, pending: Sequence[Cell]) -> Prefetch:
        """The pending cells' releases resolved in sweep order on one background thread, so a cell whose
        environment must be built finds its resolution made while the cells before it ran (in a cold sweep,
        seconds of waiting on the index per release). One thread: the cells running meanwhile are timed."""
        prefetch = Prefetch(self.matrix, self.index, workers=1)
        if self.options.refresh:  # every release is asked of the index again, by its own cell
            return prefetch
        wanted = {(cell.version, InstallKey(cell.backend or self.options.backend,
                                            requires=self.matrix.check(cell.check).requires)): None
                  for cell in pending if not cell.too_old}
        prefetch.start(list(wanted))
        return prefetch

    def _run_cells(self, cells: Sequence[Cell], current: Mapping[Cell, records.Record], progress: Progress) -> None:
        for cell in cells:
            if self.unsaved is not None:
                return
            if cell in current:
                record = current[cell]
                self.outcomes.append(CellResult(cell, record.status, record.verdict, current=True))
            else:
                self.log(progress.starting(str(cell)))
                started = time.monotonic()
                self.outcomes.append(self._run_cell(cell))
                progress.finished(time.monotonic() - started)
            self.done.add(cell)

    def run_on_slurm(self, cells: Sequence[Cell], current: Mapping[Cell, records.Record],
                     options: SlurmOptions) -> None:
        """Environments built here, once per release; then the pending cells as one job array."""
        require_sbatch()
        pending: list[Cell] = []
        for cell in cells:
            if cell in current:
                self.run([cell], current)
            elif self._prepare(_request(cell, self.options)).environment is None:
                self.run([cell], {})  # not installable: its record is written here, in seconds
            else:
                pending.append(cell)
        if not pending or self.unsaved is not None:
            return  # nothing to submit, or nowhere to keep what it would measure
        tasks = [slurm.ArrayTask(c.check, c.version, configured_processes(self.matrix, c.check)) for c in pending]
        flags = [*(["--backend", self.options.backend] if self.options.backend != "cpu" else []),
                 *(["--timeout", str(self.options.timeout_s)] if self.options.timeout_s else [])]
        landed = slurm.run_matrix(tasks, self.matrix.layout.slurm, self.matrix.results_dir, options,
                                  flags, self.log)
        for task_id, cell in enumerate(pending):
            record = (landed or {}).get(task_id)
            if landed is None:
                self.outcomes.append(CellResult(cell, "submitted", None, note="--no-wait"))
            elif record is None:
                self.outcomes.append(CellResult(cell, "error", None, note="no record when the waiting stopped; "
                                                "`nox -s report` merges it if it lands"))
            elif isinstance(record, TaskEnd):  # cancelled by SLURM, or it ended on an error
                self.outcomes.append(CellResult(cell, record.status, None, note=record.sentence))
            else:
                rec = record[1]
                self.outcomes.append(CellResult(cell, rec.status_text, rec.verdict, note=job_label(rec.slurm or None)))
            self.done.add(cell)

    def _run_cell(self, cell: Cell) -> CellResult:
        """One cell, whatever happens short of Ctrl-C: the sweep goes on."""
        try:
            request = _request(cell, self.options)
            # A release too old for the cell's target is not installable before anything resolves (`run_check`).
            prepared = None if cell.too_old else self._prepare(request)
            written, path = run_check(self.matrix, request, self.log, self.index, prepared=prepared)
            record = records.Record(written)
        except StorageError as exc:  # the results, environments or uv's folder read-only or full: the rest would too
            self.unsaved = exc
            self.log(f"ERROR in {cell}: {exc}")
            return CellResult(cell, exc.cell_status, None, note=str(exc))
        except ConfigError:  # a check's script went missing since matrix.toml was read: every later cell of it too,
            raise  # and the report after the sweep could not load matrix.toml: one sentence, exit 2, records kept
        except KitError as exc:  # the index down, say: one sentence, as the kit says it everywhere
            self.log(f"ERROR in {cell}: {exc} (no record written; the sweep goes on)")
            return CellResult(cell, "error", None, note=str(exc))
        except Exception as exc:
            self.log(f"ERROR in {cell}: {type(exc).__name__}: {exc} (no record written; the sweep goes on)\n"
                     + traceback.format_exc().rstrip())
            return CellResult(cell, "error", None, note=f"{type(exc).__name__}: {exc}")
        self.log(f"{cell}: {record.status_text}" + (f", {record.verdict}" if record.verdict else "") + f" -> {path}")
        return CellResult(cell, record.status_text, record.verdict, note=record.reason)

    def _prepare(self, request: RunRequest) -> Prepared:
        # Once per release and requirement set: checks without extra packages share the release's
        # environment, a check that requires flax gets its own. Only the release being swept is
        # kept, since cells come grouped by release.
        key = (request.version, check_for(self.matrix, request).requires, request.backend)
        if key not in self._prepared:
            kept = {k: v for k, v in self._prepared.items() if k[0] == request.version}
            self._prepared = {**kept, key: prepare(self.matrix, request, self.log, self.index)}
        return self._prepared[key]


def _request(cell: Cell, options: SweepOptions) -> RunRequest:
    backend_flag = f" -- --backend {options.backend}" if options.backend != "cpu" else ""
    if cell.target is not None:  # as `nox -s scaling-V -- --target T` writes it: the same record, current for both
        backend_flag = f" -- --target {cell.target.name}"
    return RunRequest(
        check=cell.check,
        version=cell.version,
        backend=cell.backend or options.backend,
        target=cell.target,
        timeout_s=options.timeout_s,
        refresh=options.refresh,
        reproduce=f"jax-kit {cell.check} {cell.version}{backend_flag[3:]}" if options.project
        else f"nox -s {cell.check}-{cell.version}{backend_flag}",
    )


