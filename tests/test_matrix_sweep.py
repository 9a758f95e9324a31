"""kit.matrix.sweep: every cell in order, current cells skipped, failures contained, Ctrl-C safe.

The sweeps here run on a fake machine (`tests.fake_releases`): releases on a
local index, built as fake environments whose python reads the repro's
flags and answers as the test says. Everything between is the kit's own:
planning, the locks, `prepare`, the runner, the records it writes and
whether they are current, so a second sweep judges what the first one
really left, exactly as on a real machine.
"""

from __future__ import annotations

import re
import threading
from pathlib import Path
from typing import Any, Callable

import pytest

from kit import records
from kit import exit_codes
from kit.install import plan as install
from kit.matrix import progress, release_plans, sweep
from kit.errors import KitError
from kit.install.plan import InstallPlan, Resolution
from kit.records import making
from kit.run import runner
from tests.fake_releases import FakeReleases

RELEASES = ("0.4.13", "0.4.16", "0.6.2")
NOT_INSTALLABLE = "0.4.16"
CHECKS = {"scaling": {"devices": [1, 2]}, "correctness": {"matrix_size": 4}}


@pytest.fixture
def machine(fake_releases: Callable[..., FakeReleases]) -> FakeReleases:
    """0.4.13 and 0.6.2 built; the index has no jaxlib 0.4.16 wheels."""
    return fake_releases(RELEASES, not_installable=[NOT_INSTALLABLE], checks=CHECKS)


def run(machine: FakeReleases, *argv: str) -> tuple[int, list[str]]:
    lines: list[str] = []
    code = sweep.main(machine.matrix, list(argv), lines.append)
    return code, lines


def cells_recorded(machine: FakeReleases) -> list[tuple[str, str, str]]:
    return sorted((records.record_jax(r), r["check"], r["status"])
                  for r in records.load_records(machine.matrix.results_dir).records)


ALL_CELLS = [(v, c) for v in RELEASES for c in CHECKS]
RUNNABLE = [(v, c) for v, c in ALL_CELLS if v != NOT_INSTALLABLE]


def test_every_cell_runs_in_order_with_one_prepare_per_release(machine: FakeReleases) -> None:
    code, _ = run(machine)
    assert code == exit_codes.EXIT_OK
    assert machine.runs == RUNNABLE
    assert machine.prepared == list(RELEASES)
    assert cells_recorded(machine) == sorted((v, c, "not-installable" if v == NOT_INSTALLABLE else "ran")
                                             for v, c in ALL_CELLS)
    [record] = [r for r in records.load_records(machine.matrix.results_dir).records
                if r["check"] == "scaling" and records.record_jax(r) == NOT_INSTALLABLE]
    assert record["reason"] == f"{machine.index.url} has no jaxlib 0.4.16 wheels (tried Python 3.11)"


def test_second_sweep_skips_current_cells_including_the_not_installable_one(
        machine: FakeReleases, capsys: pytest.CaptureFixture[str]) -> None:
    run(machine)
    machine.forget()
    capsys.readouterr()
    code, lines = run(machine)
    assert code == exit_codes.EXIT_OK
    assert machine.runs == []
    assert machine.prepared == []
    assert "6 of 6 cells are current" in "\n".join(lines)
    table = capsys.readouterr().out
    assert re.search(r"0\.4\.16\s+scaling\s+not-installable\s+-\s+current, skipped", table)
    assert "6 cells: 0 ran, 6 current (skipped)" in table


def test_records_of_another_kit_version_are_not_current(machine: FakeReleases, monkeypatch: pytest.MonkeyPatch) -> None:
    with monkeypatch.context() as older:
        older.setattr(runner, "__version__", "0.0.1")  # the records an older kit wrote: its identity
        older.setattr(making, "__version__", "0.0.1")  # and the record's own kit_version
        run(machine)
    machine.forget()
    _, lines = run(machine)
    assert "0 of 6 cells are current" in "\n".join(lines)
    assert machine.runs == RUNNABLE


def test_releases_without_records_are_not_resolved_before_running(
        machine: FakeReleases, monkeypatch: pytest.MonkeyPatch) -> None:
    planned: list[str] = []
    real = release_plans.resolve_release

    def counting(matrix: Any, version: str, *args: Any, **kwargs: Any) -> Any:
        planned.append(version)
        return real(matrix, version, *args, **kwargs)

    monkeypatch.setattr(release_plans, "resolve_release", counting)
    run(machine, "--only", "0.6.2")
    assert planned == []
    assert machine.prepared == ["0.6.2"]  # a cold cell goes straight to prepare()
    run(machine, "--only", "0.6.2")
    assert planned == ["0.6.2"]


def test_the_pending_cells_releases_are_resolved_ahead_in_sweep_order(
        machine: FakeReleases, monkeypatch: pytest.MonkeyPatch) -> None:
    """A cold sweep resolves the next releases while a cell runs; a current cell's release is not asked."""
    from kit.install import prefetch

    asked: list[tuple[str, str]] = []
    monkeypatch.setattr(prefetch, "resolve_release",
                        lambda matrix, version, key, index: asked.append((version, key.backend)))
    run(machine, "--only", "0.4.13")
    machine.forget()
    _wait_for(lambda: len(asked) >= 1)
    asked.clear()
    run(machine)  # 0.4.13's cells are current now
    _wait_for(lambda: len(asked) >= 2)
    assert asked == [("0.4.16", "cpu"), ("0.6.2", "cpu")]  # once per release, both checks sharing it
    asked.clear()
    run(machine, "--rerun", "--refresh")  # every cell resolves afresh itself: nothing asked ahead
    assert asked == []


def _wait_for(condition: Callable[[], bool]) -> None:
    import time
    deadline = time.monotonic() + 5
    while not condition() and time.monotonic() < deadline:
        time.sleep(0.01)


def test_the_index_is_asked_about_a_not_installable_release_once_an_hour(
        machine: FakeReleases, monkeypatch: pytest.MonkeyPatch) -> None:
    online: list[str] = []
    real = install.resolve

    def counting_resolve(plan: InstallPlan, python: str, *args: Any, offline: bool = False, **kwargs: Any) -> Resolution:
        # The sweep's own asking; its resolving ahead (the "kit-prefetch" thread) shares the cell's answer.
        if not offline and threading.current_thread().name != "kit-prefetch":
            online.append(plan.jax)
        return real(plan, python, *args, offline=offline, **kwargs)

    monkeypatch.setattr(install, "resolve", counting_resolve)
    run(machine)
    assert online == [NOT_INSTALLABLE]  # preparing it: the cells ran, records were written
    online.clear()
    run(machine)
    _, lines = run(machine)
    assert online == [NOT_INSTALLABLE]  # judging its record: once, then remembered
    assert any(line.startswith("jax 0.4.16: the index could not install it") for line in lines)
    monkeypatch.setattr(release_plans, "UNRESOLVABLE_TTL_S", 0.0)
    run(machine)
    assert online == [NOT_INSTALLABLE] * 2


def test_a_changed_parameter_makes_a_cell_stale(machine: FakeReleases) -> None:
    run(machine)
    machine.forget()
    machine.reconfigure(checks={**CHECKS, "scaling": {"devices": [1, 2, 4]}})
    run(machine)
    # A not-installable record does not depend on the parameters; runs do.
    assert machine.runs == [("0.4.13", "scaling"), ("0.6.2", "scaling")]
    assert machine.prepared == ["0.4.13", "0.6.2"]


def test_rerun_runs_everything_and_rerun_check_only_that_check(machine: FakeReleases) -> None:
    run(machine)
    machine.forget()
    run(machine, "--rerun")
    assert machine.runs == RUNNABLE
    assert machine.prepared == list(RELEASES)
    machine.forget()
    run(machine, "--rerun-check", "correctness")
    assert machine.runs == [(v, "correctness") for v in RELEASES if v != NOT_INSTALLABLE]


def test_only_and_checks_filter_the_cells(machine: FakeReleases) -> None:
    run(machine, "--only", "0.6.2,0.4.13", "--checks", "scaling")
    assert machine.runs == [("0.4.13", "scaling"), ("0.6.2", "scaling")]
    assert cells_recorded(machine) == [("0.4.13", "scaling", "ran"), ("0.6.2", "scaling", "ran")]


def test_a_crashed_record_is_not_current(machine: FakeReleases, capsys: pytest.CaptureFixture[str]) -> None:
    machine.behave("0.6.2", "crash", "unaffected", check="scaling")
    run(machine)
    assert "scaling · jax 0.6.2: the repro crashed (exit code 1): RuntimeError: fake crash" in capsys.readouterr().out
    machine.forget()
    run(machine)
    assert machine.runs == [("0.6.2", "scaling")]
    assert ("0.6.2", "scaling", "crashed") in cells_recorded(machine)


def test_an_exception_in_one_cell_does_not_stop_the_rest(
        machine: FakeReleases, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    real = sweep.run_check

    def kit_bug_in_one_cell(matrix: Any, request: runner.RunRequest, *args: Any, **kwargs: Any) -> Any:
        if (request.version, request.check) == ("0.4.13", "correctness"):
            raise RuntimeError("kit bug")
        return real(matrix, request, *args, **kwargs)

    monkeypatch.setattr(sweep, "run_check", kit_bug_in_one_cell)
    code, lines = run(machine)
    assert code == exit_codes.EXIT_OK
    assert machine.runs == [cell for cell in RUNNABLE if cell != ("0.4.13", "correctness")]
    assert any(line.startswith("ERROR in correctness · jax 0.4.13: RuntimeError: kit bug") for line in lines)
    table = capsys.readouterr().out
    assert re.search(r"0\.4\.13\s+correctness\s+error\s", table)
    assert table.rstrip().endswith("  correctness · jax 0.4.13: RuntimeError: kit bug")


def test_an_unreachable_index_in_one_cell_is_one_sentence_no_traceback_and_no_record(
        machine: FakeReleases) -> None:
    machine.stop_index()  # the built releases run from their locks; 0.4.16 needs the index
    code, lines = run(machine)
    assert code == exit_codes.EXIT_OK
    assert machine.runs == RUNNABLE
    errors = [line for line in lines if line.startswith("ERROR in scaling · jax 0.4.16")]
    assert errors == [f"ERROR in scaling · jax 0.4.16: jax 0.4.16 needs the package index to resolve its install, "
                      f"and {machine.index.url}/jax/ could not be reached over the network (Connection refused) "
                      "(no record written; the sweep goes on)"]
    assert not any("Traceback" in line for line in lines)
    assert cells_recorded(machine) == sorted((v, c, "ran") for v, c in RUNNABLE)


def test_strict_fails_on_a_crash_or_timeout_but_not_on_verdicts(machine: FakeReleases) -> None:
    assert run(machine, "--strict")[0] == exit_codes.EXIT_OK  # not-installable is an answer, not a failure
    machine.behave("0.6.2", "hang", "crash", check="correctness")
    again = ["--rerun-check", "correctness", "--only", "0.6.2", "--timeout", "5"]  # a crash ends well within it
    assert run(machine, "--strict", *again)[0] == exit_codes.EXIT_FAILED
    assert run(machine, "--strict", *again)[0] == exit_codes.EXIT_FAILED
    assert run(machine, *again)[0] == exit_codes.EXIT_OK
    statuses = [status for version, check, status in cells_recorded(machine) if (version, check) == ("0.6.2", "correctness")]
    assert sorted(statuses) == ["crashed", "crashed", "ran", "timed-out"]


def test_ctrl_c_keeps_earlier_records_and_exits_130(machine: FakeReleases) -> None:
    machine.behave("0.6.2", "interrupt", "unaffected", check="scaling")  # Ctrl-C while its repro runs
    code, lines = run(machine)
    assert code == exit_codes.EXIT_INTERRUPTED
    assert machine.runs == RUNNABLE[:3]  # the third was interrupted
    assert cells_recorded(machine) == sorted((v, c, "not-installable" if v == NOT_INSTALLABLE else "ran")
                                             for v, c in ALL_CELLS[:4])
    assert any(line.startswith("interrupted: 4 cells done (their records are kept), 2 left: "
                               "scaling · jax 0.6.2, correctness · jax 0.6.2") for line in lines)
    # The next sweep picks up where this one stopped.
    machine.forget()
    run(machine)
    assert machine.runs == ALL_CELLS[4:]


def test_ctrl_c_while_checking_currency_exits_130_without_running(
        machine: FakeReleases, monkeypatch: pytest.MonkeyPatch) -> None:
    def interrupt(plan: InstallPlan, python: str, *args: Any, **kwargs: Any) -> Resolution:
        raise KeyboardInterrupt

    run(machine)
    machine.forget()
    monkeypatch.setattr(install, "resolve", interrupt)  # while uv is asked about 0.4.16's record
    code, lines = run(machine)
    assert code == exit_codes.EXIT_INTERRUPTED
    assert machine.runs == []
    assert machine.prepared == []
    assert lines[-1].startswith("interrupted: 0 cells done (their records are kept), 6 left: ")


def test_progress_names_the_cell_and_counts_down(machine: FakeReleases) -> None:
    _, lines = run(machine, "--only", "0.6.2")
    progress = [line for line in lines if line.startswith("[")]
    assert [p.split(" (")[0] for p in progress] == ["[1/2] scaling · jax 0.6.2", "[2/2] correctness · jax 0.6.2"]
    assert re.fullmatch(r"\[1/2\] scaling · jax 0\.6\.2 \(1 more after it, \d+s elapsed\)", progress[0])


def test_progress_shows_an_eta_once_a_few_cells_ran() -> None:
    now = [0.0]
    shown = progress.Progress(total=5, clock=lambda: now[0])
    lines = []
    for _ in range(5):
        lines.append(shown.starting("cell"))
        now[0] += 30.0
        shown.finished(30.0)
    assert lines[0] == "[1/5] cell (4 more after it, 0s elapsed)"
    assert "ETA" not in lines[2]
    assert lines[3] == "[4/5] cell (1 more after it, 1m30s elapsed, ETA 1m00s)"


def test_unknown_release_or_check_is_one_usage_error(machine: FakeReleases) -> None:
    with pytest.raises(KitError, match="--only 0.9.9: not a release in matrix.toml"):
        run(machine, "--only", "0.9.9")
    with pytest.raises(KitError, match="unknown check 'scalin'"):
        run(machine, "--checks", "scalin")
    assert machine.runs == []
    assert machine.prepared == []


def test_cuda_cells_reproduce_with_the_backend_flag() -> None:
    request = sweep._request(sweep.Cell("0.6.2", "scaling"), sweep.SweepOptions(backend="cuda"))
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
        machine: FakeReleases, monkeypatch: pytest.MonkeyPatch) -> None:
    submitted: dict[str, Any] = {}

    def fake_run_matrix(tasks: Any, jobs_dir: Path, results_dir: Path, options: Any, flags: Any, log: Any) -> None:
        submitted.update(tasks=[(t.check, t.version) for t in tasks], options=options, flags=flags)
        return None  # as with --no-wait

    monkeypatch.setattr(sweep, "require_sbatch", lambda: None)
    monkeypatch.setattr(sweep, "require_controller", lambda: None)
    monkeypatch.setattr(sweep.slurm, "run_matrix", fake_run_matrix)
    code, _ = run(machine, "--slurm", "--no-wait", "--partition", "p1", "--checks", "scaling", "--timeout", "60")
    assert code == 0
    assert submitted["tasks"] == [("scaling", "0.4.13"), ("scaling", "0.6.2")]
    assert submitted["options"] == sweep.SlurmOptions("p1", None, wait=False)
    assert submitted["flags"] == ["--timeout", "60"]
    assert machine.prepared == list(RELEASES)
    assert machine.runs == []  # environments built here, runs on the nodes
    # not installable: its record is written here, not on a node
    assert cells_recorded(machine) == [(NOT_INSTALLABLE, "scaling", "not-installable")]


def test_slurm_only_options_without_slurm_are_a_usage_error(machine: FakeReleases) -> None:
    with pytest.raises(KitError, match="go with --slurm"):
        run(machine, "--no-wait")


def test_refresh_resolves_every_release_again_instead_of_reading_locks(
        machine: FakeReleases, monkeypatch: pytest.MonkeyPatch) -> None:
    run(machine)  # records to judge, so the second sweep resolves every release
    machine.forget()
    asked: list[tuple[str, bool]] = []
    real = release_plans.resolve_release

    def resolve_release(matrix: Any, version: str, *args: Any, refresh: bool = False, **kwargs: Any) -> Any:
        resolved = real(matrix, version, *args, refresh=refresh, **kwargs)
        asked.append((version, resolved.lock is None))
        return resolved

    monkeypatch.setattr(release_plans, "resolve_release", resolve_release)
    _, lines = run(machine, "--refresh")
    assert sorted(set(asked)) == [(v, True) for v in RELEASES]  # every release asked of the index and uv, no lock
    # Resolved afresh, the built releases plan as their locks said: their records are still current.
    assert "6 of 6 cells are current" in "\n".join(lines)
    assert machine.runs == []
    # and a cell that runs prepares its release afresh too
    assert sweep._request(sweep.Cell("0.6.2", "scaling"), sweep.SweepOptions(refresh=True)).refresh


# --------------------------------------------------------------------------
# End to end: the real runner, a built release whose python reads the flags with the repro's own parser


def test_devices_in_any_order_leave_a_second_sweep_nothing_to_run(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Once, devices = [4, 2, 1] made every record "not current" forever; and an ad-hoc run
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
    assert record["status"] == "ran"
    assert record["parameters"]["devices"] == [1, 2, 4]
    assert "1 cell: 0 ran, 1 current (skipped)" in sweep_once()
    assert cli.main(["run", "scaling", "0.6.0", "--devices", "2,1"], log=lines.append, matrix_path=str(toml)) == 0
    assert "1 cell: 0 ran, 1 current (skipped)" in sweep_once()
    assert len(records.load_records(matrix.results_dir).records) == 2  # the matrix's run and the ad-hoc one
