"""kit.matrix.sweep: every cell in order, current cells skipped, failures contained, Ctrl-C safe.

Installing and running are replaced by fakes that write real records, so a
second sweep sees what the first one left, exactly as on a real machine.
"""

from __future__ import annotations

import dataclasses
import re
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable

import pytest

from kit import __version__
from kit.install import plan as install, release
from kit import records
from kit import exit_codes
from kit.matrix import sweep
from kit.config import Matrix, parse_matrix
from kit.errors import IndexUnreachable, KitError
from kit.install.index import PackageIndex
from kit.install.plan import InstallPlan, Resolution
from kit.install.environment import Prepared
from kit.run.runner import RunRequest, parameters_for

RELEASES = ("0.4.13", "0.4.16", "0.6.2")
NOT_INSTALLABLE = "0.4.16"


@pytest.fixture
def matrix(tmp_path: Path) -> Matrix:
    raw = {
        "kit": {"results_dir": str(tmp_path / "results"), "envs_dir": str(tmp_path / "envs")},
        "install": {"jaxlib_archive": ""},  # the (fake) index alone decides; JAX's archive is a real page
        "release": [{"version": v} for v in RELEASES],
        "checks": {"scaling": {"devices": [1, 2]}, "correctness": {"matrix_size": 4}},
    }
    return parse_matrix(raw, tmp_path / "matrix.toml")


def fake_plan(matrix: Matrix, release: Any, backend: str, index: Any, *_: Any) -> InstallPlan:
    return InstallPlan(jax=release.version, backend=backend, requirements=(f"jax[cpu]=={release.version}", "scipy"),
                       exclude_newer="2025-01-01T00:00:00Z", index_url="https://example.invalid/simple",
                       pythons=("3.12",))


def fake_resolve(plan: InstallPlan, python: str, offline: bool = False) -> Resolution:
    if plan.jax == NOT_INSTALLABLE:
        return Resolution(python, ok=False, error=f"no version of jaxlib=={plan.jax}")
    return Resolution(python, ok=True, pins={"jax": plan.jax})


def fake_choose(plan: InstallPlan, available: list[str]) -> tuple[Resolution | None, list[Resolution]]:
    resolution = fake_resolve(plan, "3.12")
    return (resolution if resolution.ok else None), [resolution]


class FakeKit:
    """Stands in for runner.prepare and runner.run_check; writes real records."""

    def __init__(self, matrix: Matrix) -> None:
        self.matrix = matrix
        self.prepared: list[str] = []
        self.ran: list[tuple[str, str]] = []
        # (version, check) -> what run_check does instead of succeeding
        self.behaviour: dict[tuple[str, str], Callable[[], Any]] = {}

    def prepare(self, matrix: Matrix, request: RunRequest, log: Any, index: Any = None) -> Prepared:
        self.prepared.append(request.version)
        plan = fake_plan(matrix, matrix.release(request.version), request.backend, index)
        resolution, attempts = fake_choose(plan, ["3.12"])
        return Prepared(plan, resolution, None, "" if resolution else "no wheels", attempts)

    def run_check(self, matrix: Matrix, request: RunRequest, log: Any, index: Any = None,
                  prepared: Prepared | None = None) -> tuple[dict[str, Any], Path]:
        assert prepared is not None, "the sweep must share one prepared environment per release"
        self.ran.append((request.version, request.check))
        status = "ran" if prepared.resolution else "not-installable"
        special = self.behaviour.get((request.version, request.check))
        if special is not None:
            status = special()
        record = self.record(request, prepared, status)
        return record, records.write_record(record, matrix.results_dir)

    def record(self, request: RunRequest, prepared: Prepared, status: str) -> dict[str, Any]:
        return {
            "schema": records.SCHEMA,
            "kit_version": __version__,
            "check": request.check,
            "requested": {"jax": request.version, "backend": request.backend, "preset": None},
            "status": status,
            "verdict": "unaffected" if status == "ran" else None,
            "reason": status,
            "environment": {},
            "install": {"python": prepared.resolution.python if prepared.resolution else None,
                        "requirements": list(prepared.plan.requirements),
                        "exclude_newer": prepared.plan.exclude_newer},
            "parameters": parameters_for(self.matrix, request),
            "evidence": {},
            "host": {"name": "test", "machine_id": records.machine_id()},
            "reproduce": request.reproduce,
            "created": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ"),
        }


@pytest.fixture
def kit(matrix: Matrix, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> FakeKit:
    fake = FakeKit(matrix)
    monkeypatch.setenv("KIT_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(PackageIndex, "check_reachable", lambda self: None)
    monkeypatch.setattr(PackageIndex, "unknown_release", lambda self, version: "")
    monkeypatch.setattr(release, "plan_install", fake_plan)
    monkeypatch.setattr(install, "resolve", fake_resolve)
    monkeypatch.setattr(release, "available_pythons", lambda wanted: list(wanted))
    monkeypatch.setattr(sweep, "prepare", fake.prepare)
    monkeypatch.setattr(sweep, "run_check", fake.run_check)
    return fake


def run(matrix: Matrix, *argv: str) -> tuple[int, list[str]]:
    lines: list[str] = []
    code = sweep.main(matrix, list(argv), lines.append)
    return code, lines


ALL_CELLS = [(v, c) for v in RELEASES for c in ("scaling", "correctness")]


def test_every_cell_runs_in_order_with_one_prepare_per_release(matrix: Matrix, kit: FakeKit) -> None:
    code, _ = run(matrix)
    assert code == exit_codes.EXIT_OK
    assert kit.ran == ALL_CELLS
    assert kit.prepared == list(RELEASES)
    assert len(records.load_records(matrix.results_dir).records) == 6


def test_second_sweep_skips_current_cells_including_the_not_installable_one(
        matrix: Matrix, kit: FakeKit, capsys: pytest.CaptureFixture[str]) -> None:
    run(matrix)
    kit.ran.clear()
    kit.prepared.clear()
    code, lines = run(matrix)
    assert code == exit_codes.EXIT_OK
    assert kit.ran == [] and kit.prepared == []
    assert "6 of 6 cells are current" in "\n".join(lines)
    table = capsys.readouterr().out
    assert re.search(r"0\.4\.16\s+scaling\s+not-installable\s+-\s+current, skipped", table)
    assert "6 cells: 0 ran, 6 current (skipped)" in table


def test_releases_without_records_are_not_resolved_before_running(
        matrix: Matrix, kit: FakeKit, monkeypatch: pytest.MonkeyPatch) -> None:
    asked: list[str] = []

    def counting_resolve(plan: InstallPlan, python: str, offline: bool = False) -> Resolution:
        asked.append(plan.jax)
        return fake_resolve(plan, python)

    monkeypatch.setattr(install, "resolve", counting_resolve)
    run(matrix, "--only", "0.6.2")
    assert asked == []  # a cold cell goes straight to prepare()
    run(matrix, "--only", "0.6.2")
    assert asked == ["0.6.2"]


def test_the_index_is_asked_about_a_not_installable_release_once_an_hour(
        matrix: Matrix, kit: FakeKit, monkeypatch: pytest.MonkeyPatch) -> None:
    online: list[str] = []

    def counting_resolve(plan: InstallPlan, python: str, offline: bool = False) -> Resolution:
        if not offline:
            online.append(plan.jax)
        return fake_resolve(plan, python)

    monkeypatch.setattr(install, "resolve", counting_resolve)
    run(matrix)
    run(matrix)
    _, lines = run(matrix)
    assert online == [NOT_INSTALLABLE]
    assert any(line.startswith("jax 0.4.16: the index could not install it") for line in lines)
    monkeypatch.setattr(sweep, "UNRESOLVABLE_TTL_S", 0.0)
    run(matrix)
    assert online == [NOT_INSTALLABLE] * 2


def test_a_changed_parameter_makes_a_cell_stale(matrix: Matrix, kit: FakeKit, tmp_path: Path) -> None:
    run(matrix)
    kit.ran.clear()
    raw = {
        "kit": {"results_dir": str(matrix.results_dir), "envs_dir": str(tmp_path / "envs")},
        "install": {"jaxlib_archive": ""},
        "release": [{"version": v} for v in RELEASES],
        "checks": {"scaling": {"devices": [1, 2, 4]}, "correctness": {"matrix_size": 4}},
    }
    changed = parse_matrix(raw, tmp_path / "matrix.toml")
    kit.matrix = changed
    run(changed)
    # A not-installable record does not depend on the parameters; runs do.
    assert kit.ran == [("0.4.13", "scaling"), ("0.6.2", "scaling")]


def test_rerun_runs_everything_and_rerun_check_only_that_check(matrix: Matrix, kit: FakeKit) -> None:
    run(matrix)
    kit.ran.clear()
    run(matrix, "--rerun")
    assert kit.ran == ALL_CELLS
    kit.ran.clear()
    run(matrix, "--rerun-check", "correctness")
    assert kit.ran == [(v, "correctness") for v in RELEASES]


def test_only_and_checks_filter_the_cells(matrix: Matrix, kit: FakeKit) -> None:
    run(matrix, "--only", "0.6.2,0.4.13", "--checks", "scaling")
    assert kit.ran == [("0.4.13", "scaling"), ("0.6.2", "scaling")]


def test_a_crashed_record_is_not_current(matrix: Matrix, kit: FakeKit) -> None:
    kit.behaviour[("0.6.2", "scaling")] = lambda: "crashed"
    run(matrix)
    kit.ran.clear()
    del kit.behaviour[("0.6.2", "scaling")]
    run(matrix)
    assert kit.ran == [("0.6.2", "scaling")]


def test_an_exception_in_one_cell_does_not_stop_the_rest(
        matrix: Matrix, kit: FakeKit, capsys: pytest.CaptureFixture[str]) -> None:
    def boom() -> str:
        raise RuntimeError("kit bug")

    kit.behaviour[("0.4.13", "correctness")] = boom
    code, lines = run(matrix)
    assert code == exit_codes.EXIT_OK
    assert kit.ran == ALL_CELLS
    assert any(line.startswith("ERROR in correctness · jax 0.4.13: RuntimeError: kit bug") for line in lines)
    table = capsys.readouterr().out
    assert re.search(r"0\.4\.13\s+correctness\s+error\s", table)
    assert table.rstrip().endswith("  correctness · jax 0.4.13: RuntimeError: kit bug")


def test_an_unreachable_index_in_one_cell_is_one_sentence_no_traceback_and_no_record(
        matrix: Matrix, kit: FakeKit, capsys: pytest.CaptureFixture[str]) -> None:
    def index_down() -> str:
        raise IndexUnreachable("jax 0.4.13 needs the package index to resolve its install, and it could not be reached")

    kit.behaviour[("0.4.13", "scaling")] = index_down
    code, lines = run(matrix)
    assert code == exit_codes.EXIT_OK and kit.ran == ALL_CELLS
    errors = [line for line in lines if line.startswith("ERROR in scaling · jax 0.4.13")]
    assert errors == ["ERROR in scaling · jax 0.4.13: jax 0.4.13 needs the package index to resolve its install, "
                      "and it could not be reached (no record written; the sweep goes on)"]
    assert not any("Traceback" in line for line in lines)
    assert len(records.load_records(matrix.results_dir).records) == 5


def test_strict_fails_on_a_crash_or_timeout_but_not_on_verdicts(matrix: Matrix, kit: FakeKit) -> None:
    assert run(matrix, "--strict")[0] == exit_codes.EXIT_OK  # not-installable is an answer, not a failure
    kit.behaviour[("0.6.2", "correctness")] = lambda: "timed-out"
    assert run(matrix, "--strict", "--rerun")[0] == exit_codes.EXIT_FAILED
    assert run(matrix, "--rerun")[0] == exit_codes.EXIT_OK


def test_ctrl_c_keeps_earlier_records_and_exits_130(matrix: Matrix, kit: FakeKit) -> None:
    def interrupt() -> str:
        raise KeyboardInterrupt

    kit.behaviour[("0.4.16", "correctness")] = interrupt
    code, lines = run(matrix)
    assert code == exit_codes.EXIT_INTERRUPTED
    assert kit.ran == ALL_CELLS[:4]
    kept = {(records.record_jax(r), r["check"]) for r in records.load_records(matrix.results_dir).records}
    assert kept == set(ALL_CELLS[:3])
    assert any(line.startswith("interrupted: 3 cells done (their records are kept), 3 left: "
                               "correctness · jax 0.4.16, scaling · jax 0.6.2") for line in lines)
    # The next sweep picks up where this one stopped.
    del kit.behaviour[("0.4.16", "correctness")]
    kit.ran.clear()
    run(matrix)
    assert kit.ran == ALL_CELLS[3:]


def test_ctrl_c_while_checking_currency_exits_130_without_running(
        matrix: Matrix, kit: FakeKit, monkeypatch: pytest.MonkeyPatch) -> None:
    def interrupt(plan: InstallPlan, python: str, offline: bool = False) -> Resolution:
        raise KeyboardInterrupt

    run(matrix)
    kit.ran.clear()
    monkeypatch.setattr(install, "resolve", interrupt)
    code, lines = run(matrix)
    assert code == exit_codes.EXIT_INTERRUPTED
    assert kit.ran == []
    assert lines[-1].startswith("interrupted: 0 cells done (their records are kept), 6 left: ")


def test_progress_names_the_cell_and_counts_down(matrix: Matrix, kit: FakeKit) -> None:
    _, lines = run(matrix, "--only", "0.6.2")
    progress = [line for line in lines if line.startswith("[")]
    assert [p.split(" (")[0] for p in progress] == ["[1/2] scaling · jax 0.6.2", "[2/2] correctness · jax 0.6.2"]
    assert re.fullmatch(r"\[1/2\] scaling · jax 0\.6\.2 \(1 more after it, \d+s elapsed\)", progress[0])


def test_progress_shows_an_eta_once_a_few_cells_ran() -> None:
    now = [0.0]
    progress = sweep.Progress(total=5, clock=lambda: now[0])
    lines = []
    for _ in range(5):
        lines.append(progress.starting("cell"))
        now[0] += 30.0
        progress.finished(30.0)
    assert lines[0] == "[1/5] cell (4 more after it, 0s elapsed)"
    assert "ETA" not in lines[2]
    assert lines[3] == "[4/5] cell (1 more after it, 1m30s elapsed, ETA 1m00s)"


def test_unknown_release_or_check_is_one_usage_error(matrix: Matrix, kit: FakeKit) -> None:
    with pytest.raises(KitError, match="--only 0.9.9: not a release in matrix.toml"):
        run(matrix, "--only", "0.9.9")
    with pytest.raises(KitError, match="unknown check 'scalin'"):
        run(matrix, "--checks", "scalin")
    assert kit.ran == []


def test_cuda_cells_reproduce_with_the_backend_flag() -> None:
    request = sweep._request(sweep.Cell("0.6.2", "scaling"), sweep.Options(backend="cuda"))
    assert request.reproduce == "nox -s scaling-0.6.2 -- --backend cuda"


def test_closing_table_snapshot() -> None:
    outcomes = [
        sweep.CellResult(sweep.Cell("0.4.16", "scaling"), "not-installable", None, current=True),
        sweep.CellResult(sweep.Cell("0.6.2", "scaling"), "crashed", None,
                      note="the repro crashed (killed by signal 6): rendezvous timeout"),
        sweep.CellResult(sweep.Cell("0.6.2", "correctness"), "ran", "unaffected"),
    ]
    assert sweep.render_table(outcomes).splitlines() == [
        "release  check        status           verdict     this run",
        "0.4.16   scaling      not-installable  -           current, skipped",
        "0.6.2    scaling      crashed          -           ran",
        "0.6.2    correctness  ran              unaffected  ran",
        "3 cells: 2 ran, 1 current (skipped), 1 crashed, timed out, cancelled or errored",
        "  scaling · jax 0.6.2: the repro crashed (killed by signal 6): rendezvous timeout",
    ]


def test_slurm_submits_the_pending_installable_cells_as_one_array(
        matrix: Matrix, kit: FakeKit, monkeypatch: pytest.MonkeyPatch) -> None:
    submitted: dict[str, Any] = {}

    def fake_run_matrix(tasks: Any, jobs_dir: Path, results_dir: Path, options: Any, flags: Any, log: Any) -> None:
        submitted.update(tasks=[(t.check, t.version) for t in tasks], options=options, flags=flags)
        return None  # as with --no-wait

    def prepare_with_env(*args: Any, **kwargs: Any) -> Prepared:
        prepared = kit.prepare(*args, **kwargs)
        return dataclasses.replace(prepared, environment=object() if prepared.resolution else None)

    monkeypatch.setattr(sweep.slurm, "require_sbatch", lambda: None)
    monkeypatch.setattr(sweep.slurm, "require_controller", lambda: None)
    monkeypatch.setattr(sweep.slurm, "run_matrix", fake_run_matrix)
    monkeypatch.setattr(sweep, "prepare", prepare_with_env)
    code, _ = run(matrix, "--slurm", "--no-wait", "--partition", "p1", "--checks", "scaling", "--timeout", "60")
    assert code == 0
    assert submitted["tasks"] == [("scaling", "0.4.13"), ("scaling", "0.6.2")]
    assert submitted["options"] == sweep.SlurmOptions("p1", None, wait=False)
    assert submitted["flags"] == ["--timeout", "60"]
    assert kit.ran == [("0.4.16", "scaling")]  # not installable: its record is written here, not on a node


def test_slurm_only_options_without_slurm_are_a_usage_error(matrix: Matrix, kit: FakeKit) -> None:
    with pytest.raises(KitError, match="go with --slurm"):
        run(matrix, "--no-wait")


def test_refresh_resolves_every_release_again_instead_of_reading_locks(
        matrix: Matrix, kit: FakeKit, monkeypatch: pytest.MonkeyPatch) -> None:
    run(matrix)  # records to judge, so the second sweep resolves every release
    asked: list[bool] = []
    real = sweep.resolve_release

    def resolve_release(*args: Any, refresh: bool = False, **kwargs: Any) -> Any:
        asked.append(refresh)
        return real(*args, refresh=refresh, **kwargs)

    monkeypatch.setattr(sweep, "resolve_release", resolve_release)
    run(matrix, "--refresh")
    assert len(asked) >= len(RELEASES) and all(asked)
    # and a cell that runs prepares its release afresh too
    assert sweep._request(sweep.Cell("0.6.2", "scaling"), sweep.Options(refresh=True)).refresh


# --------------------------------------------------------------------------
# End to end: the real runner, a built release whose python reads the flags with the repro's own parser


def test_devices_in_any_order_leave_a_second_sweep_nothing_to_run(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """issue 17: devices = [4, 2, 1] made every record "not current" forever; and issue 18: an ad-hoc run
    (-- --devices 1,2) made the next sweep rerun a cell it had called current."""
    from kit import cli
    from tests.fake_repro import install_fake_release

    toml = tmp_path / "matrix.toml"
    toml.write_text('[kit]\nresults_dir = "results"\nenvs_dir = "envs"\n[install]\nindex_url = "http://127.0.0.1:9/simple"\n'
                    '[[release]]\nversion = "0.6.0"\n[checks.scaling]\ndevices = [4, 2, 1]\nbatch = 4096\n')
    matrix = cli.load_matrix(toml)
    install_fake_release(matrix.envs_dir, matrix, "0.6.0")
    lines: list[str] = []

    def sweep_once() -> str:
        capsys.readouterr()
        assert cli.main(["matrix"], log=lines.append, matrix_path=str(toml)) == exit_codes.EXIT_OK
        return capsys.readouterr().out

    first = sweep_once()
    assert "1 cell: 1 ran, 0 current (skipped)" in first
    [record] = records.load_records(matrix.results_dir).records
    assert record["status"] == "ran" and record["parameters"]["devices"] == [1, 2, 4]
    assert "1 cell: 0 ran, 1 current (skipped)" in sweep_once()
    assert cli.main(["run", "scaling", "0.6.0", "--devices", "2,1"], log=lines.append, matrix_path=str(toml)) == 0
    assert "1 cell: 0 ran, 1 current (skipped)" in sweep_once()
    assert len(records.load_records(matrix.results_dir).records) == 2  # the matrix's run and the ad-hoc one
