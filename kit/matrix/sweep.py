"""``nox -s matrix``: every check on every release in matrix.toml, one record each.

The sweep is resumable by design. Records are written one by one (atomically,
by `kit.run.runner`), and before running anything the sweep asks of each cell
(release × check) whether its newest record is still current: same kit
version and the same identity (kit/records/identity.py: parameters, every
installed package, hardware, JAX/XLA variables). That question is
answered from install *plans* alone (uv resolves metadata, installs nothing),
so a warm matrix where every cell is current finishes in seconds to a minute
and a Ctrl-C costs only the cell that was running.

    nox -s matrix -- [--backend cpu|cuda] [--only 0.4.16,0.6.2] [--checks scaling]
                     [--rerun | --rerun-check scaling] [--timeout S] [--strict] [--refresh]
                     [--slurm [--partition P] [--time T] [--no-wait]]   (kit/matrix/slurm.py)

Exit codes: 0 when the sweep completed (whatever the verdicts); 1 when a
cell's record could not be written (a read-only or full results folder: the
sweep stops there, the record is kept aside and the message says where), and
with ``--strict`` when a cell crashed, timed out or met an unexpected error;
130 after Ctrl-C.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import time
import traceback
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping, Sequence

from packaging.version import Version

from ..log_events import Log
from ..records import Status
from .. import records
from . import slurm
from ..arguments import Parser
from ..config import BACKENDS, Matrix, configured_parameters, release_number, timeout_seconds
from ..errors import ConfigError, KitError, StorageError, UsageError
from ..exit_codes import EXIT_FAILED, EXIT_INTERRUPTED, EXIT_OK
from ..install import InstallKey, open_index, PackageIndex, Prefetch, Prepared, resolve_release, ResolvedRelease
from ..run.facts import identity_here, job_label
from ..run.runner import RunRequest, check_for, check_subject, prepare, run_check
from .progress import Progress, clock_text
from ..slurm.jobs import SlurmOptions, require_controller, require_sbatch
from ..atomic_files import atomic_write_text



# Asking the index whether a release installs on no Python here costs a uv
# resolve per interpreter (10-60 s in all on a busy 2-core machine), on every
# sweep, for an answer that changes only when wheels are re-uploaded. Like the
# index's own page cache, the answer is kept for an hour.
UNRESOLVABLE_TTL_S = 3600.0

# Statuses that --strict turns into exit code 1. "error" is the sweep's own
# word for an unexpected exception in a cell: no record was written for it.
# "unsaved": the cell ran but its record could not be written into the
# results folder (kept aside instead); that fails the sweep even without --strict.
# "cancelled": SLURM cancelled the cell's array task (scancel, a time limit).
FAILED = (Status.CRASHED, Status.TIMED_OUT, "error", "unsaved", "cancelled")


@dataclass(frozen=True)
class Cell:
    """One release × check: what a record measures on this machine."""

    version: str
    check: str

    def __str__(self) -> str:
        return f"{self.check} · jax {self.version}"


@dataclass(frozen=True)
class Options:
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


@dataclass
class CellResult:
    """What became of one cell in this sweep, for the closing table."""

    cell: Cell
    status: str | None
    verdict: str | None
    current: bool = False
    note: str = ""


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
        log(f"sweeping {_cells(len(cells))} on {options.backend}; checking which records are current "
            "(install plans only, nothing is installed)")
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
        log(f"interrupted: {_cells(len(sweep.done))} done (their records are kept), {len(left)} left: "
            + ", ".join(str(cell) for cell in left))
        print(render_table(sweep.outcomes))
        return EXIT_INTERRUPTED
    print(render_table(sweep.outcomes))
    if sweep.unsaved is not None:
        left = [cell for cell in cells if cell not in sweep.done]
        log(f"matrix FAILED after {clock_text(time.monotonic() - started)}: {sweep.unsaved.stops}, so the "
            f"sweep stopped with {_cells(len(left))} not run; TIP: {sweep.unsaved.tip}")
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
# Options and cells


def parse_options(matrix: Matrix, argv: Sequence[str]) -> Options:
    """The command line, checked against matrix.toml (unknown names are usage errors)."""
    parser = Parser(prog="nox -s matrix --", tip="see `nox -s matrix -- --help` for the options", description="Every check on every release in matrix.toml.")
    parser.add_argument("--backend", default="cpu", choices=BACKENDS)
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
    return Options(
        backend=args.backend,
        only=tuple(_matrix_version(matrix, v) for v in _split(args.only)),
        checks=checks,
        rerun=args.rerun,
        rerun_checks=rerun_checks,
        timeout_s=args.timeout,
        strict=args.strict,
        refresh=args.refresh,
        slurm=SlurmOptions(args.partition, args.time, not args.no_wait) if args.slurm else None,
        project=matrix.shared_dir is not None,
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
                     f"use one of {', '.join(known)}, add a [[release]] for it (README: Adding a release), "
                     f"or run it once without the matrix: python -m kit run {check} {version}")


def select_cells(matrix: Matrix, options: Options) -> list[Cell]:
    """Releases oldest first, each release's checks together (they share one environment)."""
    return [
        Cell(release.version, check)
        for release in matrix.releases
        if not options.only or release.version in options.only
        for check in matrix.checks
        if not options.checks or check in options.checks
    ]


# --------------------------------------------------------------------------
# Which cells are current


def current_cells(matrix: Matrix, cells: Sequence[Cell], options: Options, index: PackageIndex,
                  log: Log) -> dict[Cell, records.Record]:
    """The cells whose newest record of matrix.toml's parameters on this machine would not change if run
    again, with it (an ad-hoc record of the same cell neither counts nor gets in the way)."""
    wanted = [cell for cell in cells if not _forced(cell, options)]
    if not wanted:
        return {}
    configured = {check: configured_parameters(matrix, check) for check in {cell.check for cell in wanted}}
    newest = records.newest_records_here(matrix.results_dir, options.backend, configured)
    found = {cell: newest[(cell.check, cell.version)] for cell in wanted if (cell.check, cell.version) in newest}
    # Only releases with a record are worth resolving: the rest run anyway. A check with extra packages
    # has its own plan of each release (its requirements are in the environment's fingerprint).
    plans: dict[tuple[str, ...], dict[str, ResolvedRelease | None]] = {}
    for requires in sorted({matrix.check(cell.check).requires for cell in found}):
        versions = sorted({cell.version for cell in found if matrix.check(cell.check).requires == requires},
                          key=Version)
        plans[requires] = plan_releases(matrix, versions, options.backend, index, log, options.refresh, requires)
    return {cell: record for cell, record in found.items()
            if _is_current(record, configured[cell.check], plans[matrix.check(cell.check).requires][cell.version],
                           cell, options)}


def _forced(cell: Cell, options: Options) -> bool:
    return options.rerun or cell.check in options.rerun_checks


def _is_current(record: records.Record, parameters: Mapping[str, Any], release: ResolvedRelease | None,
                cell: Cell, options: Options) -> bool:
    """The record's identity is this run's: same check and parameters, install, hardware and JAX/XLA variables."""
    if release is None:
        return False
    request = _request(cell, options)
    here = identity_here(subject=check_subject(request, parameters), jax=cell.version, backend=options.backend,
                         python=release.python, packages=release.versions, requirements=release.plan.requirements,
                         exclude_newer=release.plan.exclude_newer)
    if options.slurm and record.slurm:
        # The nodes' hardware is known only on the nodes: a record one of them made stands for the cluster's.
        earlier = records.record_identity(record)
        here = dataclasses.replace(here, hardware=earlier.hardware) if earlier else here
    return records.is_current(record, here)


def plan_releases(matrix: Matrix, versions: Sequence[str], backend: str, index: PackageIndex,
                  log: Log, refresh: bool = False, requires: tuple[str, ...] = ()) -> dict[str, ResolvedRelease | None]:
    """Each release's install plan and chosen Python, from metadata only (None: planning failed).

    uv first answers from its cache alone (about a second per release instead
    of ten against a slow index). That is sound for a release that resolves:
    the era cut-off excludes anything uploaded since the cache was filled, and
    a cache can only make a Python fail that the index would accept, which
    costs a needless rerun, never a wrongly skipped cell. A release that does
    not resolve from the cache is asked of the index, so "not installable"
    is always the index's answer (remembered for `UNRESOLVABLE_TTL_S`).
    A release whose planning fails (the index unreachable, say) is never
    current, so its cells run and report the failure themselves.
    """
    plans = {version: _resolve(matrix, version, backend, index, log, offline=True, refresh=refresh, requires=requires)
             for version in versions}
    for version, release in plans.items():
        if release is None or release.resolution is not None:
            continue
        memo = _unresolvable_memo(index, release)
        if _fresh(memo):
            log(f"jax {version}: the index could not install it {clock_text(time.time() - memo.stat().st_mtime)} "
                f"ago (asked again after {clock_text(UNRESOLVABLE_TTL_S)})")
            continue
        log(f"jax {version}: not resolvable from the uv cache; asking the index")
        asked = plans[version] = _resolve(matrix, version, backend, index, log, refresh=refresh, requires=requires)
        if asked is not None and asked.resolution is None:
            atomic_write_text(memo, json.dumps(release.plan.to_json(), indent=2))
    return plans


def _resolve(matrix: Matrix, version: str, backend: str, index: PackageIndex, log: Log,
             offline: bool = False, refresh: bool = False, requires: tuple[str, ...] = ()) -> ResolvedRelease | None:
    try:
        return resolve_release(matrix, version, InstallKey(backend, requires=requires), index, offline=offline,
                               refresh=refresh)
    except Exception as exc:  # the index unreachable, say: its cells will run and say so
        log(f"jax {version}: could not resolve ({exc}); its cells will run")
        return None


def _unresolvable_memo(index: PackageIndex, release: ResolvedRelease) -> Path:
    """Where the index's last "installs on no Python here" answer for the release is kept."""
    tried = [attempt.python for attempt in release.attempts]
    key = json.dumps([release.plan.to_json(), tried], sort_keys=True)
    digest = hashlib.sha256(key.encode()).hexdigest()[:16]
    return index.cache_dir / "unresolvable" / f"{release.plan.jax}-{digest}.json"


def _fresh(memo: Path) -> bool:
    try:
        return time.time() - memo.stat().st_mtime < UNRESOLVABLE_TTL_S
    except OSError:
        return False


# --------------------------------------------------------------------------
# Running


class Sweep:
    """Runs the cells that are not current, one environment per release."""

    def __init__(self, matrix: Matrix, options: Options, index: PackageIndex, log: Log) -> None:
        self.matrix = matrix
        self.options = options
        self.index = index
        self.log = log
        self.outcomes: list[CellResult] = []
        self.done: set[Cell] = set()
        self._prepared: dict[tuple[str, tuple[str, ...]], Prepared] = {}
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
        wanted = {(cell.version, InstallKey(self.options.backend, requires=self.matrix.check(cell.check).requires)): None
                  for cell in pending}
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
        tasks = [slurm.ArrayTask(c.check, c.version, int(configured_parameters(self.matrix, c.check)
                                                          .get("processes") or 1)) for c in pending]
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
            elif isinstance(record, slurm.TaskEnd):  # cancelled by SLURM, or it ended on an error
                self.outcomes.append(CellResult(cell, record.status, None, note=record.sentence))
            else:
                rec = record[1]
                self.outcomes.append(CellResult(cell, rec.status_text, rec.verdict, note=job_label(rec.slurm or None)))
            self.done.add(cell)

    def _run_cell(self, cell: Cell) -> CellResult:
        """One cell, whatever happens short of Ctrl-C: the sweep goes on."""
        try:
            request = _request(cell, self.options)
            written, path = run_check(self.matrix, request, self.log, self.index, prepared=self._prepare(request))
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
        key = (request.version, check_for(self.matrix, request).requires)
        if key not in self._prepared:
            kept = {k: v for k, v in self._prepared.items() if k[0] == request.version}
            self._prepared = {**kept, key: prepare(self.matrix, request, self.log, self.index)}
        return self._prepared[key]


def _request(cell: Cell, options: Options) -> RunRequest:
    backend_flag = f" -- --backend {options.backend}" if options.backend != "cpu" else ""
    return RunRequest(
        check=cell.check,
        version=cell.version,
        backend=options.backend,
        timeout_s=options.timeout_s,
        refresh=options.refresh,
        reproduce=f"jax-kit {cell.check} {cell.version}{backend_flag[3:]}" if options.project
        else f"nox -s {cell.check}-{cell.version}{backend_flag}",
    )


# --------------------------------------------------------------------------
# The closing table (progress lines: kit/matrix/progress.py)


def _cells(count: int) -> str:
    return f"{count} cell" + ("" if count == 1 else "s")


def render_table(outcomes: Sequence[CellResult]) -> str:
    """release | check | status | verdict | this run, a one-line tally, and why cells failed."""
    header = ("release", "check", "status", "verdict", "this run")
    rows = [(o.cell.version, o.cell.check, o.status or "-", o.verdict or "-", _this_run(o)) for o in outcomes]
    widths = [max(len(row[i]) for row in (header, *rows)) for i in range(len(header))]
    lines = ["  ".join(text.ljust(width) for text, width in zip(row, widths)).rstrip() for row in (header, *rows)]
    ran = sum(1 for o in outcomes if _this_run(o) == Status.RAN)
    failed = sum(1 for o in outcomes if o.status in FAILED)
    current = sum(1 for o in outcomes if o.current)
    lines.append(f"{_cells(len(outcomes))}: {ran} ran, {current} current (skipped), "
                 f"{failed} crashed, timed out, cancelled or errored")
    # The reason is in the record (or the log, for an error), but a reader of
    # the table should not have to dig to learn why a cell failed.
    lines += [f"  {o.cell}: {_shorten(o.note)}" for o in outcomes if o.status in FAILED]
    return "\n".join(lines)


# What became of a cell that has no record of this sweep, in the table's "this run" column.
NOT_RUN = {"submitted": "submitted", "cancelled": "cancelled", "error": "no record", "unsaved": "record kept aside"}


def _this_run(outcome: CellResult) -> str:
    return "current, skipped" if outcome.current else NOT_RUN.get(outcome.status or "", Status.RAN)


def _shorten(text: str, limit: int = 200) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
