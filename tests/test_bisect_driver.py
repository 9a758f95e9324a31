"""kit.bisect end to end (kit.bisect.driver), driven with a fake index, fake resolves, fake environments and fake runs.

Each fake release behaves as a table says (``BEHAVIOUR``: version → verdict,
status, or a list of them for successive runs), so every path of the driver
runs in milliseconds. One integration test at the end installs real releases.
"""

from __future__ import annotations

import dataclasses
import json
import stat
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from packaging.version import Version

from kit import __version__
from kit.bisect import changelog
from kit import records
from kit.run import runner
from kit.bisect import driver
from kit.bisect.candidates import Candidate
from kit.bisect.finding import REPORT_SCHEMA
from kit.bisect.outcomes import CRASH_MODES
from kit.bisect.search import Outcome, expected_probes
from kit.config import load_matrix, parse_matrix
from kit.install.environment import BUILT, Environment, Prepared
from kit.install.plan import Resolution
from kit.errors import ConfigError, UsageError

REPO = Path(__file__).resolve().parent.parent

RELEASES = ["0.4.34", "0.4.35", "0.4.36", "0.4.37", "0.4.38", "0.5.0", "0.5.1", "0.5.2", "0.5.3", "0.6.0"]

MATRIX_TOML = {
    "release": [{"version": "0.4.35"}, {"version": "0.6.0"}],
    "checks": {"scaling": {"devices": [1, 2], "batch": 64, "timeout_s": 60}},
}


class FakeIndex:
    def __init__(self, cache_dir: Path, url: str = "https://pypi.org/simple") -> None:
        self.url = url
        self.cache_dir = cache_dir

    def jax_releases(self, include_yanked: bool = False) -> list[Version]:
        return [Version(v) for v in RELEASES]


class World:
    """The fakes' shared state: what each release does, and what was called."""

    def __init__(self, behaviour: dict[str, Any], uninstallable: tuple[str, ...] = ()) -> None:
        self.behaviour = behaviour
        self.uninstallable = uninstallable
        self.runs: list[str] = []
        self.prepared: list[str] = []

    def next_result(self, version: str) -> Any:
        got = self.behaviour[version]
        if isinstance(got, list):
            return got.pop(0) if len(got) > 1 else got[0]
        return got


@pytest.fixture
def matrix(tmp_path: Path) -> Any:
    m = parse_matrix(MATRIX_TOML)
    return dataclasses.replace(m, results_dir=tmp_path / "reports" / "results", envs_dir=tmp_path / "envs")


def install_fakes(monkeypatch: pytest.MonkeyPatch, world: World, tmp_path: Path) -> None:
    def list_candidates(matrix: Any, versions: list[str], backend: str, index: Any, find_links: Any) -> list[Candidate]:
        return [Candidate(v, (f"jax[cpu]=={v}", "scipy"), None, None, v,
                          f"https://pypi.org/simple has no jaxlib {v} wheels", uploaded="2025-01-01")
                if v in world.uninstallable else
                Candidate(v, (f"jax[cpu]=={v}", "scipy"), None, "3.12", v, uploaded="2025-01-01")
                for v in versions]

    def prepare(matrix: Any, request: runner.RunRequest, log: Any, index: Any = None) -> Prepared:
        world.prepared.append(request.version)
        plan: Any = None
        if request.version in world.uninstallable:
            return Prepared(plan, None, None, f"no jaxlib {request.version} wheels")
        python = fake_python(tmp_path, request.version)
        resolution = Resolution("3.12", True, {"jaxlib": request.version})
        return Prepared(plan, resolution, Environment(python, {}, BUILT))

    def run_check(matrix: Any, request: runner.RunRequest, log: Any, index: Any = None,
                  prepared: Any = None) -> tuple[dict[str, Any], Path]:
        world.runs.append(request.version)
        if prepared is not None and prepared.environment is None:
            return {"status": "not-installable", "verdict": None, "reason": prepared.problem}, tmp_path
        result = world.next_result(request.version)
        if result in ("crashed", "timed-out"):
            return {"status": result, "verdict": None, "reason": f"the repro {result}"}, tmp_path
        return {"status": "ran", "verdict": result, "reason": f"measured {result}"}, tmp_path

    monkeypatch.setattr(driver, "open_index", lambda matrix: FakeIndex(tmp_path / "cache"))
    monkeypatch.setattr(driver, "list_candidates", list_candidates)
    monkeypatch.setattr(changelog, "fetch_changelog", lambda *args, **kwargs: (None, "offline in the tests"))
    monkeypatch.setattr(runner, "prepare", prepare)
    monkeypatch.setattr(runner, "run_check", run_check)


def fake_python(tmp_path: Path, version: str) -> Path:
    """A 'release python': the real one, with FAKE_JAX naming the release, for user scripts."""
    path = tmp_path / "envs" / version / "bin" / "python"
    if not path.exists():
        path.parent.mkdir(parents=True)
        path.write_text(f'#!/bin/sh\nFAKE_JAX={version} exec "{sys.executable}" "$@"\n')
        path.chmod(path.stat().st_mode | stat.S_IEXEC)
    return path


def run(matrix: Any, *argv: str) -> tuple[int, list[str]]:
    lines: list[str] = []
    code = driver.main(matrix, list(argv), lines.append)
    return code, lines


def report_json(matrix: Any, name: str = "*") -> dict[str, Any]:
    path = max((matrix.results_dir.parent).glob(f"bisect-{name}.json"), key=lambda p: p.stat().st_mtime_ns)
    data = json.loads(path.read_text())
    assert data["schema"] == REPORT_SCHEMA
    return data


def verdicts(first_bad: str, *, fix: bool = False) -> dict[str, str]:
    """Every release affected from ``first_bad`` on (a regression), or unaffected from there on (a fix)."""
    before, after = ("affected", "unaffected") if fix else ("unaffected", "affected")
    return {v: (after if Version(v) >= Version(first_bad) else before) for v in RELEASES}


# --------------------------------------------------------------------------
# Directions


def test_regression_is_found_with_few_probes(matrix: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    world = World(verdicts("0.5.1"))
    install_fakes(monkeypatch, world, tmp_path)
    code, _log = run(matrix, "--check", "scaling", "--good", "0.4.35", "--bad", "0.6.0")
    assert code == 0
    data = report_json(matrix)
    assert (data["last_same"], data["first_different"], data["ambiguous"]) == ("0.5.0", "0.5.1", [])
    assert len(world.runs) <= 5  # ceil(log2 9) + 1
    out = capsys.readouterr().out
    assert "9 candidate releases" in out and "about 6 probes" in out
    assert "last good release: **jax 0.5.0**" in out and "first bad release: **jax 0.5.1**" in out


def test_fix_direction_with_good_newer(matrix: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    world = World(verdicts("0.5.3", fix=True))
    install_fakes(monkeypatch, world, tmp_path)
    code, _log = run(matrix, "--check", "scaling", "--good", "0.6.0", "--bad", "0.4.35")
    assert code == 0
    data = report_json(matrix)
    assert (data["last_same"], data["first_different"]) == ("0.5.2", "0.5.3")
    out = capsys.readouterr().out
    assert "last bad release: **jax 0.5.2**" in out and "first good release: **jax 0.5.3**" in out
    assert "hunting a fix" in out


# --------------------------------------------------------------------------
# Bounds


def test_good_bound_that_is_bad_stops_with_one_message(matrix: Any, tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    world = World({v: "affected" for v in RELEASES})
    install_fakes(monkeypatch, world, tmp_path)
    with pytest.raises(UsageError, match=r"--good 0.4.35 is bad \(affected\), not good") as error:
        run(matrix, "--check", "scaling", "--good", "0.4.35", "--bad", "0.6.0")
    assert error.value.tip == "move --good away from 0.6.0: try an older release"
    assert sorted(world.runs) == ["0.4.35", "0.6.0"]  # stopped before probing anything in between


def test_swapped_bounds_say_swap(matrix: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    world = World(verdicts("0.5.1"))
    install_fakes(monkeypatch, world, tmp_path)
    with pytest.raises(UsageError) as error:
        run(matrix, "--check", "scaling", "--good", "0.6.0", "--bad", "0.4.35")
    assert error.value.tip == "swap --good and --bad"


def test_bounds_from_records(matrix: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    world = World(verdicts("0.5.3", fix=True))
    install_fakes(monkeypatch, world, tmp_path)
    for version, verdict in (("0.4.34", "affected"), ("0.4.35", "affected"), ("0.6.0", "unaffected")):
        write_record(matrix, version, verdict, current=False)
    code, log = run(matrix, "--check", "scaling")
    assert code == 0
    assert any("newest affected release 0.4.35, newest unaffected 0.6.0" in line for line in log)
    data = report_json(matrix)
    assert (data["bad"], data["good"]) == ("0.4.35", "0.6.0")
    assert data["reproduce"] == "nox -s bisect -- --check scaling --good 0.6.0 --bad 0.4.35"


def test_no_records_and_no_bounds_is_a_usage_error(matrix: Any, tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    install_fakes(monkeypatch, World({}), tmp_path)
    with pytest.raises(UsageError, match="do not hold both an affected and an unaffected"):
        run(matrix, "--check", "scaling")


@pytest.mark.parametrize(
    ("argv", "error", "message"),
    [
        (["--check", "nope", "--good", "0.4.35", "--bad", "0.6.0"], ConfigError, "unknown check 'nope'"),
        (["--check", "scaling", "--good", "banana", "--bad", "0.6.0"], UsageError, "--good 'banana' is not a plain JAX release number"),
        (["--check", "scaling", "--good", "0.4.99", "--bad", "0.6.0"], UsageError, "not a jax release"),
        (["--check", "scaling", "--good", "0.4.35"], UsageError, "both --good and --bad"),
        (["--script", "/no/such/repro.py", "--good", "0.4.35", "--bad", "0.6.0"], UsageError, "not found"),
        (["--good", "0.4.35", "--bad", "0.6.0"], UsageError, "say what to bisect"),
        (["--check", "scaling", "--crash", "maybe"], UsageError, "invalid choice"),
    ],
)
def test_bad_input_is_one_error(matrix: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, argv: list[str],
                                error: type[Exception], message: str) -> None:
    install_fakes(monkeypatch, World({}), tmp_path)
    with pytest.raises(error, match=message):
        run(matrix, *argv)


# --------------------------------------------------------------------------
# Skips, crashes, noise


def test_uninstallable_release_is_skipped_and_named(matrix: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    world = World(verdicts("0.5.1"), uninstallable=("0.5.0",))
    install_fakes(monkeypatch, world, tmp_path)
    code, log = run(matrix, "--check", "scaling", "--good", "0.4.35", "--bad", "0.6.0")
    assert code == 0
    data = report_json(matrix)
    assert data["first_different"] == "0.5.1" and data["outcomes"]["0.5.0"] == "skip"
    out = capsys.readouterr().out
    assert "jax 0.5.0      2025-01-01  NOT INSTALLABLE" in out
    assert "Skipped (yanked, not installable, crashed, inconclusive or exit 125): 0.5.0." in out
    assert "0.5.0" not in world.prepared  # the index's metadata already said so: nothing resolved


def test_skip_next_to_the_change_leaves_it_ambiguous(matrix: Any, tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    world = World(verdicts("0.5.1"), uninstallable=("0.5.0",))
    world.behaviour["0.5.0"] = "affected"  # would be the answer, but cannot be installed
    install_fakes(monkeypatch, world, tmp_path)
    run(matrix, "--check", "scaling", "--good", "0.4.35", "--bad", "0.6.0")
    data = report_json(matrix)
    assert data["ambiguous"] == ["0.5.0"] and data["first_different"] == "0.5.1"
    assert "ambiguous: the change is in one of 0.5.0, 0.5.1" in capsys.readouterr().out


@pytest.mark.parametrize(("mode", "expected_first_bad"), [("skip", "0.5.1"), ("bad", "0.5.0"), ("good", "0.5.1")])
def test_crash_modes(matrix: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, mode: str,
                     expected_first_bad: str) -> None:
    world = World(verdicts("0.5.1"))
    world.behaviour["0.5.0"] = "crashed"
    install_fakes(monkeypatch, world, tmp_path)
    run(matrix, "--check", "scaling", "--good", "0.4.35", "--bad", "0.6.0", "--crash", mode)
    data = report_json(matrix)
    assert data["first_different"] == expected_first_bad
    assert data["outcomes"]["0.5.0"] == CRASH_MODES[mode].value


def test_inconclusive_is_rerun_once_and_the_flip_reported(matrix: Any, tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    world = World(verdicts("0.5.1"))
    world.behaviour["0.5.0"] = ["inconclusive", "unaffected"]
    install_fakes(monkeypatch, world, tmp_path)
    _code, log = run(matrix, "--check", "scaling", "--good", "0.4.35", "--bad", "0.6.0")
    assert world.runs.count("0.5.0") == 2
    assert world.prepared.count("0.5.0") == 1  # the re-run reuses the environment
    assert report_json(matrix)["outcomes"]["0.5.0"] == "good"
    assert any("flipped: inconclusive → unaffected" in line for line in log)
    assert "Flipped between runs: 0.5.0." in capsys.readouterr().out


def test_twice_inconclusive_is_a_skip(matrix: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    world = World(verdicts("0.5.1"))
    world.behaviour["0.5.0"] = "inconclusive"
    install_fakes(monkeypatch, world, tmp_path)
    run(matrix, "--check", "scaling", "--good", "0.4.35", "--bad", "0.6.0")
    assert world.runs.count("0.5.0") == 2
    assert report_json(matrix)["outcomes"]["0.5.0"] == "skip"


def test_confirm_catches_a_noisy_probe(matrix: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    world = World(verdicts("0.5.1"))
    world.behaviour["0.5.0"] = ["unaffected", "affected"]
    install_fakes(monkeypatch, world, tmp_path)
    run(matrix, "--check", "scaling", "--good", "0.4.35", "--bad", "0.6.0", "--confirm", "1")
    data = report_json(matrix)
    assert data["outcomes"]["0.5.0"] == "skip" and data["observations"]["0.5.0"]["flipped"]
    assert world.runs.count("0.6.0") == 2  # every fresh probe is confirmed once


# --------------------------------------------------------------------------
# Reuse: records and the probes file


def write_record(matrix: Any, version: str, verdict: str, *, current: bool = True) -> None:
    parameters = runner.parameters_for(matrix, runner.RunRequest(check="scaling", version=version))
    record = {
        "schema": records.SCHEMA, "kit_version": __version__ if current else "0.0.1", "check": "scaling",
        "requested": {"jax": version, "backend": "cpu"}, "status": "ran", "verdict": verdict,
        "reason": f"recorded {verdict}", "environment": {},
        "install": {"python": "3.12", "requirements": [f"jax[cpu]=={version}", "scipy"], "exclude_newer": None},
        "parameters": parameters, "evidence": {}, "host": {"machine_id": records.machine_id()},
        "created": "2026-11-29T00:00:00Z",
    }
    records.write_record(record, matrix.results_dir)


def test_current_records_are_not_rerun(matrix: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    world = World(verdicts("0.5.1"))
    install_fakes(monkeypatch, world, tmp_path)
    write_record(matrix, "0.4.35", "unaffected")
    write_record(matrix, "0.6.0", "affected")
    write_record(matrix, "0.5.0", "affected", current=False)  # another kit version: measured again
    write_record(matrix, "0.5.1", "inconclusive")  # current, but re-run once before it counts
    run(matrix, "--check", "scaling", "--good", "0.4.35", "--bad", "0.6.0")
    assert "0.4.35" not in world.prepared and "0.6.0" not in world.prepared
    assert "0.5.0" in world.runs and world.runs.count("0.5.1") == 1
    data = report_json(matrix)
    assert data["answered_by_records"] == ["0.4.35", "0.6.0"]
    assert data["observations"]["0.5.1"]["source"] == "record+run"


def test_rerun_runs_nothing_and_says_so(matrix: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    world = World(verdicts("0.5.1"))
    install_fakes(monkeypatch, world, tmp_path)
    argv = ["--check", "scaling", "--good", "0.4.35", "--bad", "0.6.0"]
    run(matrix, *argv)
    first = report_json(matrix)
    assert first["cost"][0].startswith(f"This run probed {len(first['probed_now'])} releases (")
    assert list((matrix.results_dir.parent / "bisect" / "probes").glob("*.json"))
    world.runs.clear(), world.prepared.clear()
    capsys.readouterr()
    run(matrix, *argv)
    second = report_json(matrix)
    assert world.runs == [] and world.prepared == []
    assert second["first_different"] == first["first_different"]
    assert second["probed_now"] == [] and second["environments_built_now"] == []
    assert sorted(second["answered_by_cache"], key=Version) == sorted(first["probed_now"], key=Version)
    out = capsys.readouterr().out
    assert "This run ran nothing and built nothing" in out
    assert f"they had built {len(first['environments_built_now'])} environments" in out


def test_other_bounds_rerun_nothing_already_known(matrix: Any, tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    world = World(verdicts("0.5.1"))
    install_fakes(monkeypatch, world, tmp_path)
    run(matrix, "--check", "scaling", "--good", "0.4.35", "--bad", "0.6.0")
    done = set(world.runs)
    world.runs.clear()
    run(matrix, "--check", "scaling", "--good", "0.4.34", "--bad", "0.5.2", "--all")
    assert not set(world.runs) & done  # one cache for every bisect, whatever its bounds or mode
    assert set(report_json(matrix, name="*-all")["answered_by_cache"]) == done & set(RELEASES[:8])


def test_a_wider_bisect_runs_only_its_new_bound(matrix: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    world = World(verdicts("0.5.1"))
    install_fakes(monkeypatch, world, tmp_path)
    run(matrix, "--check", "scaling", "--good", "0.4.36", "--bad", "0.6.0")
    world.runs.clear()
    capsys.readouterr()
    run(matrix, "--check", "scaling", "--good", "0.4.34", "--bad", "0.6.0")
    assert world.runs == ["0.4.34"]  # the known outcomes narrow the search before any midpoint is picked
    assert report_json(matrix, name="*0.4.34*")["first_different"] == "0.5.1"
    assert "already known" in capsys.readouterr().out


def test_interrupted_bisect_keeps_finished_probes(matrix: Any, tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    world = World(verdicts("0.5.1"))
    world.behaviour["0.5.2"] = "boom"
    install_fakes(monkeypatch, world, tmp_path)
    real_run_check = runner.run_check

    def interrupted(matrix: Any, request: runner.RunRequest, *args: Any, **kwargs: Any) -> Any:
        if request.version == "0.5.2":
            raise KeyboardInterrupt
        return real_run_check(matrix, request, *args, **kwargs)

    monkeypatch.setattr(runner, "run_check", interrupted)
    argv = ["--check", "scaling", "--good", "0.4.35", "--bad", "0.6.0"]
    with pytest.raises(KeyboardInterrupt):
        run(matrix, *argv)
    done = list(world.runs)
    assert done  # the ends and 0.5.0 were probed before the interrupt
    world.behaviour["0.5.2"] = "affected"
    monkeypatch.setattr(runner, "run_check", real_run_check)
    world.runs.clear()
    run(matrix, *argv)
    assert not set(world.runs) & set(done)
    assert report_json(matrix)["first_different"] == "0.5.1"


def test_changed_parameters_do_not_reuse_probes(matrix: Any, tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    world = World(verdicts("0.5.1"))
    install_fakes(monkeypatch, world, tmp_path)
    argv = ["--check", "scaling", "--good", "0.4.35", "--bad", "0.6.0"]
    run(matrix, *argv)
    changed = dataclasses.replace(matrix, checks={"scaling": dataclasses.replace(
        matrix.checks["scaling"], parameters={**matrix.checks["scaling"].parameters, "batch": 128})})
    world.runs.clear()
    run(changed, *argv)
    assert world.runs  # measured again: the parameters are part of the probe's key


# --------------------------------------------------------------------------
# --all


def test_all_reports_every_transition_and_flags_non_monotonic(matrix: Any, tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    world = World(verdicts("0.5.1"))
    world.behaviour["0.4.37"] = "affected"  # came, went, came back
    install_fakes(monkeypatch, world, tmp_path)
    run(matrix, "--check", "scaling", "--good", "0.4.35", "--bad", "0.6.0", "--all")
    assert sorted(world.runs, key=Version) == RELEASES[1:]
    data = report_json(matrix)
    assert data["non_monotonic"] is True
    assert [(t["before"], t["after"]) for t in data["transitions"]] == [
        ("0.4.36", "0.4.37"), ("0.4.37", "0.4.38"), ("0.5.0", "0.5.1")]
    assert "**Non-monotonic**" in capsys.readouterr().out


# --------------------------------------------------------------------------
# User scripts, as `git bisect run` reads them


SCRIPT = textwrap.dedent(
    """\
    import os, signal, sys, time
    exits = {exits!r}
    code = exits.get(os.environ["FAKE_JAX"], 0)
    if code == "kill":
        os.kill(os.getpid(), signal.SIGKILL)
    if code == "hang":
        time.sleep(30)
    sys.exit(code)
    """
)


def write_script(tmp_path: Path, exits: dict[str, Any]) -> Path:
    path = tmp_path / "repro.py"
    path.write_text(SCRIPT.format(exits=exits))
    return path


def test_script_is_bisected_by_its_exit_codes(matrix: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    install_fakes(monkeypatch, World({}), tmp_path)
    exits = {v: (3 if Version(v) >= Version("0.5.2") else 0) for v in RELEASES}
    exits["0.5.0"] = 125
    script = write_script(tmp_path, exits)
    code, log = run(matrix, "--script", str(script), "--good", "0.4.34", "--bad", "0.6.0")
    assert code == 0
    data = report_json(matrix)
    assert (data["last_same"], data["first_different"]) == ("0.5.1", "0.5.2")
    assert data["name"] == "script-repro-good0.4.34-bad0.6.0-cpu"
    out = capsys.readouterr().out
    assert "first bad release: **jax 0.5.2**" in out


@pytest.mark.parametrize(("behaviour", "mode", "outcome"), [("kill", "skip", "skip"), ("kill", "bad", "bad"),
                                                            ("hang", "good", "good")])
def test_script_crash_and_timeout(matrix: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, behaviour: str,
                                  mode: str, outcome: str) -> None:
    install_fakes(monkeypatch, World({}), tmp_path)
    exits: dict[str, Any] = {"0.4.35": 0, "0.4.36": behaviour, "0.4.37": 1}
    script = write_script(tmp_path, exits)
    run(matrix, "--script", str(script), "--good", "0.4.35", "--bad", "0.4.37", "--crash", mode, "--timeout", "2")
    data = report_json(matrix)
    assert data["outcomes"]["0.4.36"] == outcome
    assert data["observations"]["0.4.36"]["status"] == ("crashed" if behaviour == "kill" else "timed-out")


def test_timeout_reads_as_such_and_is_remembered(matrix: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    install_fakes(monkeypatch, World({}), tmp_path)
    script = write_script(tmp_path, {"0.4.34": 0, "0.4.35": 0, "0.4.36": "hang", "0.4.37": 1, "0.4.38": 1})
    run(matrix, "--script", str(script), "--good", "0.4.35", "--bad", "0.4.37", "--crash", "bad", "--timeout", "1")
    assert "| timed out after 1 s, counted bad by --crash bad |" in capsys.readouterr().out
    # Other bounds over the same script: the timeout is known, not waited for again ...
    run(matrix, "--script", str(script), "--good", "0.4.34", "--bad", "0.4.38", "--crash", "bad", "--timeout", "1",
        "--all")
    data = report_json(matrix, name="*-all")
    assert "0.4.36" in data["answered_by_cache"] and "0.4.36" not in data["probed_now"]
    # ... but a longer timeout deserves a new try.
    run(matrix, "--script", str(script), "--good", "0.4.35", "--bad", "0.4.37", "--crash", "bad", "--timeout", "2")
    assert report_json(matrix, name="*0.4.37-cpu")["probed_now"] == ["0.4.36"]


def test_all_checks_the_labels_of_the_bounds(matrix: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    world = World(verdicts("0.5.1"))
    install_fakes(monkeypatch, world, tmp_path)
    run(matrix, "--check", "scaling", "--good", "0.4.35", "--bad", "0.5.0", "--all")  # 0.5.0 is still good
    out = capsys.readouterr().out
    assert "**--bad 0.5.0 tested good (unaffected), not bad**" in out
    assert "- --good 0.4.35 tested good (unaffected), as given." in out
    data = report_json(matrix)
    assert data["bounds_tested"]["--bad"] == {"version": "0.5.0", "wanted": "bad", "tested": "good"}


def test_release_notes_are_one_line_of_links_when_unreachable(matrix: Any, tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    world = World(verdicts("0.5.1"))
    world.behaviour["0.5.0"] = "crashed"
    install_fakes(monkeypatch, world, tmp_path)
    run(matrix, "--check", "scaling", "--good", "0.4.35", "--bad", "0.6.0")  # ambiguous: 0.5.0 or 0.5.1
    notes = report_json(matrix)["release_notes"]
    assert len(notes) == 1 and "offline in the tests" in notes[0]
    assert "[jax 0.5.0](https://github.com/jax-ml/jax/blob/jax-v0.5.0/CHANGELOG.md)" in notes[0]
    assert "[jax 0.5.1](" in notes[0]


def test_help_explains_git_bisect_run_codes(capsys: pytest.CaptureFixture[str], matrix: Any) -> None:
    assert driver.main(matrix, ["--help"], print) == 0
    out = capsys.readouterr().out
    assert "git bisect run" in out and "125" in out and "--timeout" in out


# --------------------------------------------------------------------------
# The report


def test_report_has_links_notes_and_reproduce_line(matrix: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                   ) -> None:
    world = World(verdicts("0.5.3", fix=True))
    install_fakes(monkeypatch, world, tmp_path)
    notes = tmp_path / "CHANGELOG.md"
    notes.write_text("# Changelog\n\n## JAX 0.6.0 (April 16, 2025)\n\n* newer\n\n"
                     "## jax 0.5.3 (March 19, 2025)\n\n* Fixed sharding of batched LU.\n\n"
                     "## jax 0.5.2 (Mar 4, 2025)\n\n* older\n")
    argv = ["--check", "scaling", "--good", "0.6.0", "--bad", "0.4.35", "--changelog", str(notes)]
    run(matrix, *argv)
    markdown = (matrix.results_dir.parent / "bisect-scaling-good0.6.0-bad0.4.35-cpu.md").read_text()
    assert "https://github.com/jax-ml/jax/compare/jax-v0.5.2...jax-v0.5.3" in markdown
    assert "Fixed sharding of batched LU." in markdown and "* older" not in markdown
    assert "## Reproduce with:" in markdown
    assert "    nox -s bisect -- --check scaling --good 0.6.0 --bad 0.4.35 --changelog " + str(notes) in markdown
    assert "Searched jax 0.4.35 … 0.6.0 (9 releases)" in markdown
    data = report_json(matrix)
    assert data["compare"].endswith("jax-v0.5.2...jax-v0.5.3")
    assert data["environments_built_now"] and data["probes"] == len(data["outcomes"])


# --------------------------------------------------------------------------
# Real releases


INTEGRATION_SCRIPT = textwrap.dedent(
    """\
    # Bad from jax 0.5.2 on: stands in for a user's repro of a behaviour change.
    import sys
    import jax
    version = tuple(int(p) for p in jax.__version__.split(".")[:3])
    print("jax", jax.__version__, "jaxlib", __import__("jaxlib").__version__)
    sys.exit(1 if version >= (0, 5, 2) else 0)
    """
)


@pytest.mark.integration
def test_real_script_bisect_finds_the_release(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    matrix = load_matrix(REPO / "matrix.toml")
    matrix = dataclasses.replace(matrix, results_dir=tmp_path / "reports" / "results",
                                 envs_dir=REPO / matrix.envs_dir)  # reuse the real environments
    script = tmp_path / "repro.py"
    script.write_text(INTEGRATION_SCRIPT)
    argv = ["--script", str(script), "--good", "0.5.0", "--bad", "0.5.3"]
    assert driver.main(matrix, argv, print) == 0
    data = report_json(matrix)
    assert [c["version"] for c in data["candidates"]] == ["0.5.0", "0.5.1", "0.5.2", "0.5.3"]
    assert data["candidates"][2]["jaxlib"] == "0.5.1"  # 0.5.2 is a jax-only release
    assert (data["last_same"], data["first_different"], data["ambiguous"]) == ("0.5.1", "0.5.2", [])
    # Both ends plus ceil(log2 3) halvings: every candidate of so short a range.
    assert len(data["environments_built_now"]) + len(data["environments_reused_now"]) <= expected_probes(4)
