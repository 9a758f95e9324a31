"""kit.bisect.probe.probes: one probe of a check, answered from what is known first, run (once) otherwise.

A `Prober` on the fake machine (tests/fake_releases.py): candidates from the
index's metadata, the probe cache, records and runs all real; each test
asks it for one release and sees where the answer came from.

A ``--script`` probe runs through the runner, as the check block with that
script would: the script runs for real with the fake release's python
(``FAKE_JAX`` names the release), and ``--requires flax`` is resolved by uv
against the fake index, which has a flax of each era (`FLAX`), installed as a
stub that knows its version.
"""

from __future__ import annotations

import dataclasses
import textwrap
from pathlib import Path
from typing import Any, Callable

import pytest

from kit.bisect import driver
from kit.bisect.candidates import Candidate, list_candidates
from kit.bisect.options import parse_options
from kit.bisect.observation import Observation
from kit.bisect.probe.cache import ProbeCache
from kit.bisect.run_spec import run_spec
from kit.bisect.probe.judges import release_prober
from kit.bisect.probe.probes import Prober
from kit.bisect.search import ProbeOutcome
from kit.check_settings import DEFAULT_TIMEOUT_S
from kit.errors import UsageError
from kit.install.environment import Prepared
from kit.install.release import open_index
from kit.run import runner
from kit.install.key import InstallKey
from tests.fake_releases import FakeReleases
from tests.bisect_machine import CHECKS, PLAIN_MATRIX, RELEASES as TEN_RELEASES, report_json, run
from tests.observations import observed

RELEASES = ["0.5.0", "0.5.1", "0.5.2"]


@pytest.fixture
def machine(fake_releases: Callable[..., FakeReleases]) -> FakeReleases:
    return fake_releases(RELEASES, checks={"scaling": {"devices": [1, 2], "batch": 64, "timeout_s": 60}})


def prober(machine: FakeReleases, *flags: str, candidates: list[Candidate] | None = None) -> Prober:
    options = parse_options(machine.matrix, ["--check", "scaling", "--good", "0.5.0", "--bad", "0.5.2", *flags])
    index = open_index(machine.matrix)
    listed = candidates or list_candidates(machine.matrix, RELEASES, InstallKey("cpu"), index)
    cache = ProbeCache(machine.matrix.layout.probe_cache, read=not options.fresh)
    return release_prober(machine.matrix, options.specs, run_spec(machine.matrix, options.specs.runs), listed, cache, "test", index,
                          lambda line: None)


def test_a_release_runs_once_and_its_observation_is_kept_for_every_later_bisect(machine: FakeReleases) -> None:
    machine.behave("0.5.1", "affected")
    assert prober(machine)("0.5.1") is ProbeOutcome.BAD
    assert machine.versions_run == ["0.5.1"]
    assert machine.prepared == ["0.5.1"]
    machine.forget()
    again = prober(machine)
    assert again("0.5.1") is ProbeOutcome.BAD
    assert machine.runs == []
    assert machine.prepared == []  # known: nothing resolved, nothing run
    assert again.observations["0.5.1"].came_from.source == "cache"
    assert again.ran_now == []
    assert prober(machine).known_outcomes() == {"0.5.1": ProbeOutcome.BAD}  # handed to the search before it starts


def test_fresh_measures_again(machine: FakeReleases) -> None:
    prober(machine)("0.5.1")
    machine.forget()
    machine.behave("0.5.1", "affected")
    fresh = prober(machine, "--fresh")
    assert fresh.known_outcomes() == {}
    assert fresh("0.5.1") is ProbeOutcome.BAD
    assert machine.versions_run == ["0.5.1"]


def test_a_current_record_of_the_matrix_answers_without_a_run(machine: FakeReleases) -> None:
    machine.behave("0.5.0", "unaffected")
    runner.run_check(machine.matrix, runner.RunRequest(check="scaling", version="0.5.0"), lambda line: None)
    machine.forget()
    probe = prober(machine)
    assert probe("0.5.0") is ProbeOutcome.GOOD
    assert machine.runs == []
    assert machine.prepared == []
    assert probe.observations["0.5.0"].came_from.source == "record"
    assert probe.ran_now == []


def test_what_the_index_already_says_is_not_installed_or_run(machine: FakeReleases) -> None:
    listed = list_candidates(machine.matrix, RELEASES, InstallKey("cpu"), open_index(machine.matrix))
    yanked = dataclasses.replace(listed[0], yanked="broken wheel")
    missing = dataclasses.replace(listed[1], problem="the index has no jaxlib 0.5.1 wheels", python=None)
    probe = prober(machine, candidates=[yanked, missing, listed[2]])
    assert probe("0.5.0") is ProbeOutcome.SKIP
    assert probe("0.5.1") is ProbeOutcome.SKIP
    assert machine.runs == []
    assert machine.prepared == []
    assert [probe.observations[v].came_from.source for v in ("0.5.0", "0.5.1")] == ["index", "index"]
    assert probe.observations["0.5.0"].found.reason == "yanked from the index (broken wheel): not probed"
    assert probe.known_outcomes() == {}  # nor looked up in the cache


def test_a_release_without_a_lock_is_looked_up_once_it_is_prepared(machine: FakeReleases) -> None:
    prober(machine)("0.5.2")  # kept under the identity of the environment it ran in
    machine.forget()
    for lock in (machine.matrix.envs_dir / "locks").glob("jax-0.5.2-*.json"):
        lock.unlink()  # the environment is there, but nothing says what it installs without resolving
    probe = prober(machine)
    assert probe.known_outcomes() == {}  # nothing to know it by before the search starts
    assert probe("0.5.2") is ProbeOutcome.GOOD
    assert machine.prepared == ["0.5.2"]
    assert machine.runs == []  # resolved (uv, the index), then found: not run
    assert probe.observations["0.5.2"].came_from.source == "cache"


def test_an_inconclusive_run_is_run_once_more_in_the_same_environment(machine: FakeReleases) -> None:
    machine.behave("0.5.1", "inconclusive", "affected")
    probe = prober(machine)
    assert probe("0.5.1") is ProbeOutcome.BAD
    assert machine.versions_run == ["0.5.1", "0.5.1"]
    assert machine.prepared == ["0.5.1"]
    seen = probe.observations["0.5.1"]
    assert seen.found.runs == ["inconclusive", "affected"]
    assert seen.found.flipped
    assert (seen.installed.python, seen.installed.jaxlib, seen.installed.environment, seen.cost.timeout_s) == ("3.11", "0.5.1", "reused", 60)


@pytest.mark.parametrize(("flags", "timeout"), [((), 60), (("--timeout", "5"), 5)])
def test_the_time_limit_is_the_command_lines_else_the_checks(machine: FakeReleases, flags: tuple[str, ...],
                                                              timeout: int) -> None:
    assert prober(machine, *flags).subject.timeout == timeout


def test_a_script_without_a_limit_gets_the_default(machine: FakeReleases, tmp_path: Path) -> None:
    script = tmp_path / "repro.py"
    script.write_text("raise SystemExit(0)\n")
    options = parse_options(machine.matrix, ["--script", str(script), "--good", "0.5.0", "--bad", "0.5.2"])
    probe: Any = release_prober(machine.matrix, options.specs, run_spec(machine.matrix, options.specs.runs), [], ProbeCache(tmp_path),
                                "test", open_index(machine.matrix), print)
    assert probe.subject.timeout == DEFAULT_TIMEOUT_S  # a check block's default, as the same script in one would get


def test_every_observation_made_is_logged_with_where_it_came_from(machine: FakeReleases) -> None:
    lines: list[str] = []
    options = parse_options(machine.matrix, ["--check", "scaling", "--good", "0.5.0", "--bad", "0.5.2"])
    index = open_index(machine.matrix)
    probe = release_prober(machine.matrix, options.specs, run_spec(machine.matrix, options.specs.runs),
                           list_candidates(machine.matrix, RELEASES, InstallKey("cpu"), index),
                           ProbeCache(machine.matrix.layout.probe_cache), "test", index, lines.append)
    machine.behave("0.5.0", "crash")
    assert probe("0.5.0") is ProbeOutcome.SKIP  # --crash skip, the default
    assert lines[-1] == ("probe jax 0.5.0: skip [run] the repro crashed (exit code 1): "
                         "RuntimeError: fake crash of scaling on jax 0.5.0")
    assert isinstance(probe.observations["0.5.0"], Observation)


# --------------------------------------------------------------------------
# Scripts: --requires, --bad-if, and the one route a script and a check share

# Each release's era gets its own flax (what --requires flax installs): uploaded with the release named.
FLAX = {"0.4.34": "0.10.0", "0.4.35": "0.10.1", "0.4.36": "0.10.2", "0.4.37": "0.10.2", "0.4.38": "0.10.2",
        "0.5.0": "0.10.2", "0.5.1": "0.10.4", "0.5.2": "0.10.4", "0.5.3": "0.10.4", "0.6.0": "0.10.6"}
FLAX_UPLOADS = [("flax", "0.10.0", "0.4.34"), ("flax", "0.10.1", "0.4.35"), ("flax", "0.10.2", "0.4.36"),
                ("flax", "0.10.4", "0.5.1"), ("flax", "0.10.6", "0.6.0")]


@pytest.fixture
def ten(fake_releases: Callable[..., FakeReleases], monkeypatch: pytest.MonkeyPatch) -> Callable[..., FakeReleases]:
    """``ten(checks=...)``: the ten releases of tests/test_bisect_driver.py, with a flax of each era on the index."""
    from kit.bisect.report import changelog

    monkeypatch.setattr(changelog, "fetch_changelog", lambda *args, **kwargs: (None, "offline in the tests"))

    def make(checks: dict[str, Any] | None = None) -> FakeReleases:
        return fake_releases(TEN_RELEASES, matrix_releases=["0.4.35", "0.6.0"], checks={**CHECKS, **(checks or {})},
                             packages=FLAX_UPLOADS)

    return make


IMPORTS_FLAX = textwrap.dedent("""\
    import flax
    print("flax", flax.__version__)
    """)


def _script(tmp_path: Path, body: str, name: str = "uses_flax.py") -> Path:
    path = tmp_path / name
    path.write_text(body)
    return path


def test_bounds_that_cannot_import_a_package_stop_naming_it_and_requires(ten: Callable[..., FakeReleases],
                                                                       tmp_path: Path) -> None:
    machine = ten()
    script = _script(tmp_path, IMPORTS_FLAX)
    with pytest.raises(UsageError) as error:
        run(machine, "--script", str(script), "--good", "0.5.0", "--bad", "0.4.34")
    assert str(error.value).startswith("the script could not import flax on jax ")
    assert "; pass --requires flax to install it for each release's era" in str(error.value)
    assert error.value.tip.endswith("--requires flax")
    assert sorted(machine.versions_run) == ["0.4.34", "0.5.0"]  # the bounds only, each once


def test_with_requires_each_probe_line_names_the_version_its_release_got(ten: Callable[..., FakeReleases],
                                                                        tmp_path: Path) -> None:
    machine = ten()
    body = IMPORTS_FLAX + "import os, sys\nsys.exit(0 if os.environ['FAKE_JAX'] >= '0.4.36' else 1)\n"
    code, log = run(machine, "--script", str(_script(tmp_path, body)), "--requires", "flax",
                    "--good", "0.5.0", "--bad", "0.4.34")
    assert code == 0
    data = report_json(machine)
    assert (data["last_same"], data["first_different"]) == ("0.4.35", "0.4.36")
    probes = [line for line in log if line.startswith("probe jax ")]
    assert probes
    assert all(line.endswith(f" · flax {FLAX[line.split()[2].rstrip(':')]}") for line in probes)
    assert data["observations"]["0.4.35"]["installed"]["extra_packages"] == {"flax": "0.10.1"}
    # The probes' records are kept, apart from the matrix's.
    kept = list((machine.matrix.results_dir.parent / "bisect" / "script-records").glob("*-0.*-cpu-*.json"))
    assert len(kept) == len(machine.runs)
    assert not machine.matrix.results_dir.exists()


# A user's repro of jax#25329 ("jit errors if an argument is named f", 0.4.36 only, here 0.4.37 to 0.5.1), in a
# script that fails otherwise on two releases: as real repros do, it meets other changes on the way.
KWARG_F = textwrap.dedent("""\
    import os
    jax = os.environ["FAKE_JAX"]
    if jax == "0.4.35":
        raise AttributeError("module 'jax.numpy' has no attribute 'unstack'")
    if jax == "0.5.0":
        raise ValueError("Incompatible shapes for broadcasting: (3,) and (4,)")
    if jax in ("0.4.37", "0.4.38", "0.5.1"):
        raise TypeError("result_paths() got multiple values for argument 'f'")
    print("ok")
    """)


def test_bad_if_finds_the_release_of_that_error_and_skips_the_others_naming_them(
        ten: Callable[..., FakeReleases], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    machine = ten()
    script = _script(tmp_path, KWARG_F, "kwarg_f.py")
    argv = ["--script", str(script), "--good", "0.4.34", "--bad", "0.5.1", "--all"]
    run(machine, *argv)
    plain = report_json(machine)  # without --bad-if every failure is bad: 0.4.35's AttributeError is the "change"
    assert plain["transitions"][0]["after"] == "0.4.35"
    run(machine, *argv, "--bad-if", "multiple values for argument 'f'")
    data = report_json(machine, name="*0.5.1-cpu-all")
    assert [(t["before"], t["after"]) for t in data["transitions"]] == [("0.4.36", "0.4.37")]
    assert data["outcomes"]["0.4.35"] == data["outcomes"]["0.5.0"] == "skip"
    assert data["observations"]["0.5.0"]["found"]["exception"] == "ValueError: Incompatible shapes for broadcasting: (3,) and (4,)"
    written = next(machine.matrix.results_dir.parent.glob("bisect-*0.5.1-cpu-all.md")).read_text()
    out = capsys.readouterr().out + written  # the console is quiet: the report has the table
    assert "0.4.35 (AttributeError: module 'jax.numpy' has no attribute 'unstack')" in out
    assert "| skip (failed otherwise: ValueError) |" in out


def test_bad_if_narrows_a_bisect_to_the_right_release(ten: Callable[..., FakeReleases], tmp_path: Path) -> None:
    machine = ten()
    script = _script(tmp_path, KWARG_F, "kwarg_f.py")
    run(machine, "--script", str(script), "--good", "0.4.34", "--bad", "0.5.1", "--bad-if", "argument 'f'")
    data = report_json(machine)
    assert (data["last_same"], data["first_different"], data["ambiguous"]) == ("0.4.36", "0.4.37", [])


def test_a_script_and_the_same_file_as_a_check_give_equal_records(ten: Callable[..., FakeReleases],
                                                                  tmp_path: Path) -> None:
    script = _script(tmp_path, IMPORTS_FLAX + "raise TypeError(\"got multiple values for argument 'f'\")\n",
                     "kwarg_f.py")
    table = {"script": str(script), "host_devices": 2, "requires": ["flax"], "bad_if": "argument 'f'"}
    machine = ten(checks={"kwarg": table})
    matrix = machine.matrix
    options = parse_options(matrix, ["--script", str(script), "--host-devices", "2", "--requires", "flax",
                                     "--bad-if", "argument 'f'", "--good", "0.4.34", "--bad", "0.4.36"])
    as_script = runner.RunRequest(check=options.subject, version="0.4.36", script=options.script_check)
    as_check = runner.RunRequest(check="kwarg", version="0.4.36")
    runner.prepare(matrix, as_check, lambda _m: None)  # the environment is built once: both reuse it
    made = [runner.run_check(matrix, request, lambda _m: None, driver.open_index(matrix),
                             runner.prepare(matrix, request, lambda _m: None))[0] for request in (as_script, as_check)]
    assert [record["install"]["environment"] for record in made] == ["reused", "reused"]
    volatile = {"check", "created", "duration_s", "reproduce", "identity"}
    assert {k: v for k, v in made[0].items() if k not in volatile} == {k: v for k, v in made[1].items()
                                                                       if k not in volatile}
    # Their identities differ only in the check's name: the same script, settings, packages and machine.
    identities = [{**record["identity"], "subject": {**record["identity"]["subject"], "check": None}} for record in made]
    assert identities[0] == identities[1]
    assert made[0]["verdict"] == "affected"
    assert made[0]["environment"]["packages"] == {"flax": "0.10.2"}
    assert made[0]["environment"]["device_count"] == 2
    assert made[0]["parameters"]["bad_if"] == "argument 'f'"
    # A --script's probes are keyed by what decides its outcome: its content and settings, not its path.
    moved = _script(tmp_path, script.read_text(), "elsewhere.py")
    same = parse_options(matrix, ["--script", str(moved), "--host-devices", "2", "--requires", "flax",
                                  "--bad-if", "argument 'f'", "--good", "0.4.34", "--bad", "0.4.36"])
    other = parse_options(matrix, ["--script", str(moved), "--host-devices", "2", "--requires", "flax",
                                   "--good", "0.4.34", "--bad", "0.4.36"])
    assert run_spec(matrix, options.specs.runs).subject == run_spec(matrix, same.specs.runs).subject != run_spec(matrix, other.specs.runs).subject


@pytest.mark.parametrize(("argv", "message"), [
    (["--check", "scaling", "--requires", "flax"], "--requires applies to --script"),
    (["--check", "scaling", "--bad-if", "x"], "--bad-if applies to --script"),
    (["--script", "SCRIPT", "--bad-if", "f(x"], "--bad-if 'f(x' is not a regular expression"),
    (["--script", "SCRIPT", "--requires", "jax"], "--requires 'jax' is part of the release under test"),
    (["--script", "SCRIPT", "--host-devices", "0"], "argument --host-devices: must be a positive whole number"),
])
def test_a_script_s_settings_are_checked_where_they_enter(tmp_path: Path, argv: list[str], message: str) -> None:
    script = _script(tmp_path, "print('ok')\n")
    argv = [str(script) if arg == "SCRIPT" else arg for arg in argv]
    with pytest.raises(UsageError, match=message.replace("(", r"\(")):
        parse_options(PLAIN_MATRIX, [*argv, "--good", "0.4.34", "--bad", "0.4.36"])


def test_an_install_that_failed_is_tried_again_by_the_next_bisect(ten: Callable[..., FakeReleases], tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    machine = ten()
    prepare, failing = runner.prepare, {"0.4.35"}

    def install_fails(matrix: Any, request: runner.RunRequest, log: Any, index: Any = None) -> Prepared:
        prepared = prepare(matrix, request, log, index)
        if request.version in failing:  # resolved, but the build of a dependency failed
            return dataclasses.replace(prepared, environment=None, problem="install failed: a build needed the network")
        return prepared

    monkeypatch.setattr(runner, "prepare", install_fails)
    script = _script(tmp_path, "import os, sys\nsys.exit(0 if os.environ['FAKE_JAX'] >= '0.4.36' else 1)\n")
    argv = ["--script", str(script), "--good", "0.4.36", "--bad", "0.4.34", "--all"]
    run(machine, *argv)
    assert report_json(machine)["outcomes"]["0.4.35"] == "skip"
    failing.clear()
    run(machine, *argv)
    data = report_json(machine)
    assert data["outcomes"]["0.4.35"] == "bad"
    assert "0.4.35" in data["probed_now"]
    assert "0.4.34" in data["answered_by_cache"]  # what did run is known


# --------------------------------------------------------------------------
# The Prober itself: any subject with any judge, composed, never subclassed


class _Subject:
    """Only what the Prober asks of a subject directly: its candidates, a name, and ``done``."""

    def __init__(self, candidates: list[Candidate]) -> None:
        self.candidates = {c.version: c for c in candidates}
        self.finished: list[str] = []

    def name_of(self, key: str) -> str:
        return f"thing {key}"

    def done(self, key: str) -> None:
        self.finished.append(key)


class _Judge:
    """Answers from a table; ``1.0`` measured now, ``2.0`` known before; ``3.0`` fails mid-probe."""

    def __init__(self) -> None:
        self.asked: list[str] = []
        self.name = "t"

    def observe(self, subject: Any, candidate: Candidate) -> Any:
        from kit.bisect.probe.probes import Look
        self.asked.append(candidate.version)
        if candidate.version == "3.0":
            raise KeyboardInterrupt  # Ctrl-C mid-run: the subject still cleans up
        verdict = "affected" if candidate.version == "1.0" else "unaffected"
        return Look(observed("ran", verdict, "table", "run"), candidate.version == "1.0")

    def remembered(self, subject: Any, key: str) -> Observation | None:
        return observed("ran", "unaffected", "kept", "cache") if key == "2.0" else None

    def start(self, subject: Any, bounds: Any) -> dict[str, Any]:
        from kit.bisect.probe.probes import Look
        return {bounds.good: Look(observed("ran", "unaffected", "baseline", "run"), True)}

    def line(self, name: str, observation: Observation, result: ProbeOutcome) -> str:
        return f"{name}: {result.value}"

    def summary(self, observations: Any) -> dict[str, Any]:
        return {"seen": sorted(observations)}


def test_a_prober_is_any_subject_judged_by_any_judge(machine: FakeReleases) -> None:
    from kit.bisect.bounds import Bounds

    listed = [Candidate(v, (), None, "3.12", v) for v in ("1.0", "2.0", "3.0")]
    listed.append(Candidate("4.0", (), None, "3.12", "4.0", yanked="broken"))
    subject, judge, lines = _Subject(listed), _Judge(), []
    probe = Prober(subject, judge, "skip", lines.append)  # type: ignore[arg-type]
    assert probe.ruled_out() == {"4.0": ProbeOutcome.SKIP}
    assert probe.known_outcomes() == {"2.0": ProbeOutcome.GOOD}
    assert probe("1.0") is ProbeOutcome.BAD
    assert lines == ["thing 1.0: bad"]
    assert probe("4.0") is ProbeOutcome.SKIP
    assert "4.0" not in judge.asked  # the index's metadata answered it
    with pytest.raises(KeyboardInterrupt):
        probe("3.0")
    assert subject.finished == ["1.0", "3.0"]  # after every probe the judge saw, even one that was interrupted
    started: dict[str, ProbeOutcome] = {}
    probe.start(Bounds.of_releases("2.0", "1.0"), started)
    assert probe.ran_now == ["1.0", "2.0"]  # measured now: 1.0 by its probe, 2.0 by the judge's start
    assert started == {"2.0": ProbeOutcome.GOOD}  # the judge's baseline, classified by the prober for the search
    assert probe.summary() == {"seen": ["1.0", "2.0", "4.0"]}


def test_a_scaling_probe_on_cpu_times_nothing_and_is_kept_apart_from_timed_runs(machine: FakeReleases) -> None:
    """Its verdict comes from the compiled HLO there: the probe runs with no repeats, its record says so,
    and neither its cache entry nor its record stands for a run with timings (--metric, the matrix)."""
    machine.behave("0.5.1", "affected")
    probe = prober(machine)
    assert probe("0.5.1") is ProbeOutcome.BAD
    record = next(r for r in _records(machine.matrix.results_dir) if r["requested"]["jax"] == "0.5.1")
    assert (record["parameters"]["repeats"], record["parameters"]["warmup"]) == (0, 0)
    assert record["reproduce"].endswith(" --repeats 0 --warmup 0")  # it reruns what the probe ran
    timed = parse_options(machine.matrix, ["--check", "scaling", "--good", "0.5.0", "--bad", "0.5.2",
                                           "--metric", "slogdet_2dev_ms"])
    assert "repeats" not in run_spec(machine.matrix, timed.specs.runs).subject["parameters"]  # the check's own (matrix.toml's)
    checked = probe.subject.spec.subject  # what runs, apart from the release
    assert run_spec(machine.matrix, timed.specs.runs).subject != checked
    assert checked["parameters"]["repeats"] == 0
    # A timed record of the same run still answers the untimed probe (it read the same HLO).
    machine.behave("0.5.0", "unaffected")
    runner.run_check(machine.matrix, runner.RunRequest(check="scaling", version="0.5.0"), lambda line: None)
    machine.forget()
    again = prober(machine)
    assert again("0.5.0") is ProbeOutcome.GOOD
    assert again.observations["0.5.0"].came_from.source == "record"
    assert machine.runs == []


def test_a_probe_on_a_gpu_keeps_its_timings(machine: FakeReleases) -> None:
    """There timing can veto "unaffected": the probe measures what the verdict weighs."""
    options = parse_options(machine.matrix, ["--check", "scaling", "--good", "0.5.0", "--bad", "0.5.2",
                                             "--backend", "cuda"])
    assert "repeats" not in run_spec(machine.matrix, options.specs.runs).subject["parameters"]


def _records(folder: Path) -> list[dict[str, Any]]:
    import json

    return [json.loads(path.read_text()) for path in sorted(folder.rglob("*.json"))]
