"""kit.bisect end to end (kit.bisect.driver), on a fake machine (`tests.fake_releases`).

Ten releases on a local index, built as fake environments whose repro answers
as each test says (`verdicts`: every release before a version one way, from
it on the other); the candidate list, the probes, the runner, the records and
their currency, the probe cache and the reports are the kit's own. One
integration test at the end installs real releases.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import textwrap
from pathlib import Path
from typing import Any, Callable

import pytest
from packaging.version import Version

from kit.bisect.report import changelog
from kit.run import runner
from kit.bisect.probe import cluster
from kit.bisect import driver
from kit.bisect.outcomes import CRASH_MODES
from kit.bisect.search import expected_probes
from kit.config import load_matrix
from kit.install.release import plan_release
from kit.errors import ConfigError, UsageError
from kit.install.key import InstallKey
from repro.environment import jax_variables
from tests.bisect_machine import CHECKS, PLAIN_MATRIX, RELEASES, record_run, report_json, run, verdicts  # noqa: F401 (shared)
from tests.fake_releases import FakeReleases

REPO = Path(__file__).resolve().parent.parent

@pytest.fixture
def machine(fake_releases: Callable[..., FakeReleases], monkeypatch: pytest.MonkeyPatch) -> Callable[..., FakeReleases]:
    """``machine(verdicts, not_installable=..., built=...)``: the ten releases, each answering as ``verdicts`` say."""
    monkeypatch.setattr(changelog, "fetch_changelog", lambda *args, **kwargs: (None, "offline in the tests"))

    def make(behaviour: dict[str, Any] | None = None, **kwargs: Any) -> FakeReleases:
        made = fake_releases(RELEASES, matrix_releases=["0.4.35", "0.6.0"], checks=CHECKS, **kwargs)
        for version, results in (behaviour or {}).items():
            made.behave(version, *(results if isinstance(results, list) else [results]))
        return made

    return make


def seen(capsys: pytest.CaptureFixture[str], releases: FakeReleases) -> str:
    """What a user reads: the console (quiet unless -v: the summary) and then the newest markdown report."""
    newest = max(releases.matrix.results_dir.parent.glob("bisect-*.md"), key=lambda p: p.stat().st_mtime_ns)
    return capsys.readouterr().out + newest.read_text()


# --------------------------------------------------------------------------
# Directions


def test_regression_is_found_with_few_probes(machine: Callable[..., FakeReleases]) -> None:
    releases = machine(verdicts("0.5.1"))
    code, _log = run(releases, "--check", "scaling", "--good", "0.4.35", "--bad", "0.6.0")
    assert code == 0
    data = report_json(releases)
    assert (data["last_same"], data["first_different"], data["ambiguous"]) == ("0.5.0", "0.5.1", [])
    assert data["fix"] is False
    assert (data["outcomes"]["0.5.0"], data["outcomes"]["0.5.1"]) == ("good", "bad")  # last good, first bad
    assert [c["version"] for c in data["candidates"]] == RELEASES[1:]
    assert len(releases.runs) <= 5  # ceil(log2 9) + 1
    assert {check for _version, check in releases.runs} == {"scaling"}


def test_fix_direction_with_good_newer(machine: Callable[..., FakeReleases]) -> None:
    releases = machine(verdicts("0.5.3", fix=True))
    code, _log = run(releases, "--check", "scaling", "--good", "0.6.0", "--bad", "0.4.35")
    assert code == 0
    data = report_json(releases)
    assert (data["last_same"], data["first_different"]) == ("0.5.2", "0.5.3")
    assert data["fix"] is True
    assert (data["outcomes"]["0.5.2"], data["outcomes"]["0.5.3"]) == ("bad", "good")  # last bad, first good


def test_each_probe_leaves_a_record_of_the_matrix_parameters(machine: Callable[..., FakeReleases]) -> None:
    from kit import records

    releases = machine(verdicts("0.5.1"))
    run(releases, "--check", "scaling", "--good", "0.4.35", "--bad", "0.6.0")
    written = records.load_records(releases.matrix.results_dir).records
    assert sorted((records.record_jax(r) for r in written), key=Version) == sorted(releases.versions_run, key=Version)
    assert {tuple(r["parameters"]["devices"]) for r in written} == {(1, 2)}
    assert all(r["parameters"]["batch"] == 64 and r["status"] == "ran" for r in written)


# --------------------------------------------------------------------------
# Bounds


def test_good_bound_that_is_bad_stops_with_one_message(machine: Callable[..., FakeReleases]) -> None:
    releases = machine({v: "affected" for v in RELEASES})
    with pytest.raises(UsageError, match=r"--good 0.4.35 is bad \(affected\), not good") as error:
        run(releases, "--check", "scaling", "--good", "0.4.35", "--bad", "0.6.0")
    assert error.value.tip == "move --good away from 0.6.0: try an older release"
    assert sorted(releases.versions_run) == ["0.4.35", "0.6.0"]  # stopped before probing anything in between


def test_swapped_bounds_say_swap(machine: Callable[..., FakeReleases]) -> None:
    releases = machine(verdicts("0.5.1"))
    with pytest.raises(UsageError) as error:
        run(releases, "--check", "scaling", "--good", "0.6.0", "--bad", "0.4.35")
    assert error.value.tip == "swap --good and --bad"


def test_bounds_from_records(machine: Callable[..., FakeReleases], monkeypatch: pytest.MonkeyPatch) -> None:
    releases = machine(verdicts("0.5.3", fix=True))
    with monkeypatch.context() as older:
        older.setattr(runner, "__version__", "0.0.1")  # records an older kit wrote still say where to look
        for version, verdict in (("0.4.34", "affected"), ("0.4.35", "affected"), ("0.6.0", "unaffected")):
            record_run(releases, version, verdict)
    releases.behave("0.4.34", "affected")
    code, _log = run(releases, "--check", "scaling")
    assert code == 0
    data = report_json(releases)
    assert data["bounds_source"] == "records"
    assert (data["bad"], data["good"]) == ("0.4.35", "0.6.0")  # the newest affected and unaffected releases
    assert data["reproduce"] == "nox -s bisect -- --check scaling --good 0.6.0 --bad 0.4.35"
    assert data["answered_by_records"] == []  # an older kit's records are measured again


def test_no_records_and_no_bounds_is_a_usage_error(machine: Callable[..., FakeReleases]) -> None:
    releases = machine()
    with pytest.raises(UsageError, match="do not hold both an affected and an unaffected"):
        run(releases, "--check", "scaling")


@pytest.mark.parametrize(
    ("argv", "error", "message"),
    [
        (["--check", "nope", "--good", "0.4.35", "--bad", "0.6.0"], ConfigError, "unknown check 'nope'"),
        (["--check", "scaling", "--good", "banana", "--bad", "0.6.0"], UsageError, "--good 'banana' is not a plain JAX release number"),
        (["--check", "scaling", "--good", "0.4.99", "--bad", "0.6.0"], UsageError, "not a jax release"),
        (["--script", "/no/such/repro.py", "--good", "0.4.35", "--bad", "0.6.0"], UsageError, "does not exist"),
        (["--good", "0.4.35", "--bad", "0.6.0"], UsageError, "say what to bisect"),
        (["--check", "scaling", "--crash", "maybe"], UsageError, "invalid choice"),
    ],
)
def test_bad_input_is_one_error(machine: Callable[..., FakeReleases], argv: list[str],
                                error: type[Exception], message: str) -> None:
    releases = machine()
    with pytest.raises(error, match=message):
        run(releases, *argv)
    assert releases.runs == []
    assert releases.prepared == []


# --------------------------------------------------------------------------
# Skips, crashes, noise


def test_uninstallable_release_is_skipped_and_named(machine: Callable[..., FakeReleases]) -> None:
    releases = machine(verdicts("0.5.1"), not_installable=["0.5.0"])
    code, _log = run(releases, "--check", "scaling", "--good", "0.4.35", "--bad", "0.6.0")
    assert code == 0
    data = report_json(releases)
    assert data["first_different"] == "0.5.1"
    assert data["outcomes"]["0.5.0"] == "skip"
    problem = next(c["problem"] for c in data["candidates"] if c["version"] == "0.5.0")
    assert re.fullmatch(r"http://127\.0\.0\.1:\d+/simple has no jaxlib 0\.5\.0 wheels \(tried Python 3\.11\)", problem)
    found = data["observations"]["0.5.0"]
    assert (found["found"]["status"], found["came_from"]["source"]) == ("not-installable", "index")
    assert "0.5.0" not in releases.prepared  # the index's metadata already said so: nothing resolved


def test_release_only_an_unreachable_archive_could_install_is_skipped_not_fatal(
        machine: Callable[..., FakeReleases]) -> None:
    """The index lacks 0.5.0's jaxlib and JAX's archive is out of reach: that one release is unknown, the rest bisect."""
    silent = "http://127.0.0.1:9/jax_releases.html"  # nothing listens on port 9
    releases = machine(verdicts("0.5.1"), not_installable=["0.5.0"], install={"jaxlib_archive": silent})
    code, _log = run(releases, "--check", "scaling", "--good", "0.4.35", "--bad", "0.6.0")
    assert code == 0
    data = report_json(releases)
    assert data["first_different"] == "0.5.1"
    assert data["outcomes"]["0.5.0"] == "skip"
    assert data["ambiguous"] == ["0.5.0"]
    found = data["observations"]["0.5.0"]["found"]
    assert found["status"] == "unreachable"
    # The reason is the only place that names the setting to fix and its URL (then the OS's error, not checked).
    assert re.match(r"installability unknown here: jax 0\.5\.0 needs the archive of pruned jaxlibs "
                    r"\(install\.jaxlib_archive\) http://127\.0\.0\.1:9/jax_releases\.html to install", found["reason"])
    assert "0.5.0" in releases.prepared  # asked, unlike a release the metadata rules out


def test_skip_next_to_the_change_leaves_it_ambiguous(machine: Callable[..., FakeReleases]) -> None:
    releases = machine(verdicts("0.5.1"), not_installable=["0.5.0"])
    run(releases, "--check", "scaling", "--good", "0.4.35", "--bad", "0.6.0")
    data = report_json(releases)
    assert data["ambiguous"] == ["0.5.0"]
    assert (data["last_same"], data["first_different"]) == ("0.4.38", "0.5.1")  # the change is in 0.5.0 or 0.5.1


@pytest.mark.parametrize(("mode", "expected_first_bad"), [("skip", "0.5.1"), ("bad", "0.5.0"), ("good", "0.5.1")])
def test_crash_modes(machine: Callable[..., FakeReleases], mode: str, expected_first_bad: str) -> None:
    releases = machine({**verdicts("0.5.1"), "0.5.0": "crash"})
    run(releases, "--check", "scaling", "--good", "0.4.35", "--bad", "0.6.0", "--crash", mode)
    data = report_json(releases)
    assert data["first_different"] == expected_first_bad
    assert data["outcomes"]["0.5.0"] == CRASH_MODES[mode].value
    assert data["observations"]["0.5.0"]["found"]["reason"] == ("the repro crashed (exit code 1): "
                                                       "RuntimeError: fake crash of scaling on jax 0.5.0")


def test_inconclusive_is_rerun_once_and_the_flip_reported(machine: Callable[..., FakeReleases]) -> None:
    releases = machine({**verdicts("0.5.1"), "0.5.0": ["inconclusive", "unaffected"]})
    run(releases, "--check", "scaling", "--good", "0.4.35", "--bad", "0.6.0")
    assert releases.versions_run.count("0.5.0") == 2
    assert releases.prepared.count("0.5.0") == 1  # the re-run reuses the environment
    data = report_json(releases)
    assert data["outcomes"]["0.5.0"] == "good"
    found = data["observations"]["0.5.0"]["found"]
    assert found["flipped"] is True
    assert found["runs"] == ["inconclusive", "unaffected"]
    assert [v for v, seen in data["observations"].items() if seen["found"]["flipped"]] == ["0.5.0"]


def test_twice_inconclusive_is_a_skip(machine: Callable[..., FakeReleases]) -> None:
    releases = machine({**verdicts("0.5.1"), "0.5.0": "inconclusive"})
    run(releases, "--check", "scaling", "--good", "0.4.35", "--bad", "0.6.0")
    assert releases.versions_run.count("0.5.0") == 2
    assert report_json(releases)["outcomes"]["0.5.0"] == "skip"


def test_confirm_catches_a_noisy_probe(machine: Callable[..., FakeReleases]) -> None:
    releases = machine({**verdicts("0.5.1"), "0.5.0": ["unaffected", "affected"]})
    run(releases, "--check", "scaling", "--good", "0.4.35", "--bad", "0.6.0", "--confirm", "1")
    data = report_json(releases)
    assert data["outcomes"]["0.5.0"] == "skip"
    assert data["observations"]["0.5.0"]["found"]["flipped"]
    assert releases.versions_run.count("0.6.0") == 2  # every fresh probe is confirmed once


# --------------------------------------------------------------------------
# Reuse: records and the probes file


def test_current_records_are_not_rerun(machine: Callable[..., FakeReleases], monkeypatch: pytest.MonkeyPatch) -> None:
    releases = machine()
    record_run(releases, "0.4.35", "unaffected")
    record_run(releases, "0.6.0", "affected")
    record_run(releases, "0.5.1", "inconclusive")  # current, but re-run once before it counts
    with monkeypatch.context() as older:
        older.setattr(runner, "__version__", "0.0.1")
        record_run(releases, "0.5.0", "affected")  # an older kit's: measured again
    releases.forget()
    for version, verdict in verdicts("0.5.1").items():
        releases.behave(version, verdict)
    run(releases, "--check", "scaling", "--good", "0.4.35", "--bad", "0.6.0")
    assert "0.4.35" not in releases.prepared
    assert "0.6.0" not in releases.prepared
    assert "0.5.0" in releases.versions_run
    assert releases.versions_run.count("0.5.1") == 1
    data = report_json(releases)
    assert data["answered_by_records"] == ["0.4.35", "0.6.0"]
    assert data["observations"]["0.5.1"]["came_from"]["source"] == "record+run"
    assert data["outcomes"]["0.5.0"] == "good"  # as measured now, not as the stale record said


def test_a_record_of_other_parameters_is_not_an_answer(machine: Callable[..., FakeReleases]) -> None:
    releases = machine(verdicts("0.5.1"))
    releases.behave("0.6.0", "unaffected")  # what an ad-hoc run on one device saw
    runner.run_check(releases.matrix, runner.RunRequest(check="scaling", version="0.6.0", overrides={"devices": [1]}),
                     lambda line: None)
    releases.forget()
    releases.behave("0.6.0", "affected")
    run(releases, "--check", "scaling", "--good", "0.4.35", "--bad", "0.6.0")
    assert "0.6.0" in releases.versions_run
    assert report_json(releases)["answered_by_records"] == []


def test_rerun_runs_nothing_and_says_so(machine: Callable[..., FakeReleases],
                                        capsys: pytest.CaptureFixture[str]) -> None:
    releases = machine(verdicts("0.5.1"), built=RELEASES[:5])  # the newer half is built by this bisect
    argv = ["--check", "scaling", "--good", "0.4.35", "--bad", "0.6.0"]
    run(releases, *argv)
    first = report_json(releases)
    assert first["cost"][0].startswith(f"This run probed {len(first['probed_now'])} releases (")
    assert first["environments_built_now"]
    assert first["environments_reused_now"]
    assert list((releases.matrix.results_dir.parent / "bisect" / "probes").rglob("*.json"))
    releases.forget()
    capsys.readouterr()
    run(releases, *argv)
    second = report_json(releases)
    assert releases.runs == []
    assert releases.prepared == []
    assert second["first_different"] == first["first_different"]
    assert second["probed_now"] == []
    assert second["environments_built_now"] == []
    assert sorted(second["answered_by_cache"], key=Version) == sorted(first["probed_now"], key=Version)
    remembered = {v: seen["installed"]["environment"] for v, seen in second["observations"].items()
                  if v in second["answered_by_cache"]}
    assert sorted(v for v, built in remembered.items() if built == "built") == sorted(first["environments_built_now"])
    # Prose on purpose: when the whole answer is remembered, the report tells the user how to distrust it.
    assert "rerun with --fresh" in seen(capsys, releases)


def test_other_bounds_rerun_nothing_already_known(machine: Callable[..., FakeReleases]) -> None:
    releases = machine(verdicts("0.5.1"))
    run(releases, "--check", "scaling", "--good", "0.4.35", "--bad", "0.6.0")
    done = set(releases.versions_run)
    releases.forget()
    run(releases, "--check", "scaling", "--good", "0.4.34", "--bad", "0.5.2", "--all")
    assert not set(releases.versions_run) & done  # one cache for every bisect, whatever its bounds or mode
    assert set(report_json(releases, name="*-all")["answered_by_cache"]) == done & set(RELEASES[:8])


def test_a_wider_bisect_runs_only_its_new_bound(machine: Callable[..., FakeReleases]) -> None:
    releases = machine(verdicts("0.5.1"))
    run(releases, "--check", "scaling", "--good", "0.4.36", "--bad", "0.6.0")
    done = releases.versions_run
    releases.forget()
    run(releases, "--check", "scaling", "--good", "0.4.34", "--bad", "0.6.0")
    assert releases.versions_run == ["0.4.34"]  # the known outcomes narrow the search before any midpoint is picked
    data = report_json(releases, name="*0.4.34*")
    assert data["first_different"] == "0.5.1"
    assert data["probed_now"] == ["0.4.34"]
    assert sorted(data["answered_by_cache"], key=Version) == sorted(done, key=Version)


def test_interrupted_bisect_keeps_finished_probes(machine: Callable[..., FakeReleases]) -> None:
    releases = machine({**verdicts("0.5.1"), "0.5.2": ["interrupt", "affected"]})  # Ctrl-C while 0.5.2 runs
    argv = ["--check", "scaling", "--good", "0.4.35", "--bad", "0.6.0"]
    with pytest.raises(KeyboardInterrupt):
        run(releases, *argv)
    done = [version for version in releases.versions_run if version != "0.5.2"]
    assert done
    assert releases.versions_run[-1] == "0.5.2"  # the ends and 0.5.0 were probed before the interrupt
    releases.forget()
    run(releases, *argv)
    assert not set(releases.versions_run) & set(done)
    assert report_json(releases)["first_different"] == "0.5.1"


def test_changed_parameters_do_not_reuse_probes(machine: Callable[..., FakeReleases]) -> None:
    releases = machine(verdicts("0.5.1"))
    argv = ["--check", "scaling", "--good", "0.4.35", "--bad", "0.6.0"]
    run(releases, *argv)
    first = releases.versions_run
    releases.forget()
    run(releases, *argv)
    assert releases.versions_run == []  # the control: the same parameters reuse every probe
    releases.reconfigure(checks={"scaling": {**CHECKS["scaling"], "batch": 128}})
    run(releases, *argv)
    # Every probe measured again, in the same order: the parameters are part of the probe's key.
    assert releases.versions_run == first
    assert len(first) >= 3


# --------------------------------------------------------------------------
# --all


def test_all_reports_every_transition_and_flags_non_monotonic(machine: Callable[..., FakeReleases]) -> None:
    releases = machine({**verdicts("0.5.1"), "0.4.37": "affected"})  # came, went, came back
    run(releases, "--check", "scaling", "--good", "0.4.35", "--bad", "0.6.0", "--all")
    assert sorted(releases.versions_run, key=Version) == RELEASES[1:]
    data = report_json(releases)
    assert data["non_monotonic"] is True
    assert [(t["before"], t["after"]) for t in data["transitions"]] == [
        ("0.4.36", "0.4.37"), ("0.4.37", "0.4.38"), ("0.5.0", "0.5.1")]


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
        time.sleep(120)
    sys.exit(code)
    """
)


def write_script(tmp_path: Path, exits: dict[str, Any]) -> Path:
    path = tmp_path / "repro.py"
    path.write_text(SCRIPT.format(exits=exits))
    return path


def test_script_is_bisected_by_its_exit_codes(machine: Callable[..., FakeReleases], tmp_path: Path) -> None:
    releases = machine()
    exits = {v: (3 if Version(v) >= Version("0.5.2") else 0) for v in RELEASES}
    exits["0.5.0"] = 125
    script = write_script(tmp_path, exits)
    code, _log = run(releases, "--script", str(script), "--good", "0.4.34", "--bad", "0.6.0")
    assert code == 0
    data = report_json(releases)
    assert (data["last_same"], data["first_different"]) == ("0.5.1", "0.5.2")
    assert (data["outcomes"]["0.5.1"], data["outcomes"]["0.5.2"]) == ("good", "bad")  # exit 0 good, exit 3 bad
    assert data["name"] == "script-repro-good0.4.34-bad0.6.0-cpu"
    assert {check for _version, check in releases.runs} == {"script"}


NOISY_SCRIPT = textwrap.dedent(
    """\
    import os, sys
    for line in range(30):
        print(f"line {line} of jax {os.environ['FAKE_JAX']}")
    partitionable = os.environ.get("JAX_THREEFRY_PARTITIONABLE") == "1"
    sys.exit(1 if partitionable or os.environ["FAKE_JAX"] >= "0.5" else 0)
    """
)


def test_an_exported_jax_variable_is_never_answered_by_probes_made_without_it(
        machine: Callable[..., FakeReleases], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Once, with JAX_THREEFRY_PARTITIONABLE=1 exported, a rerun answered from probes made without it.
    releases = machine()
    script = tmp_path / "repro.py"
    script.write_text(NOISY_SCRIPT)
    argv = ["--script", str(script), "--good", "0.4.35", "--bad", "0.6.0"]
    for name in jax_variables():  # hermetic: a caller's own JAX_REPO or XLA_FLAGS is in every identity too
        monkeypatch.delenv(name)
    run(releases, *argv)
    first = report_json(releases)
    assert first["first_different"] == "0.5.0"
    monkeypatch.setenv("JAX_THREEFRY_PARTITIONABLE", "1")
    with pytest.raises(UsageError, match=r"--good 0.4.35 is bad.*probed now; an earlier probe .* was not reused: "
                                         r"JAX_THREEFRY_PARTITIONABLE unset there, 1 here"):
        run(releases, *argv)
    second = report_json(releases)  # a search that stopped at its bounds still leaves its report
    assert second["probed_now"] == ["0.4.35", "0.6.0"]
    assert second["answered_by_cache"] == []
    assert "JAX_THREEFRY_PARTITIONABLE unset there, 1 here" in second["observations"]["0.4.35"]["came_from"]["not_reused"]
    assert second["stopped"].startswith("--good 0.4.35 is bad")
    markdown = (releases.matrix.results_dir.parent / f"bisect-{second['name']}.md").read_text()
    # Prose on purpose: the report's section on probes run again, which no other test renders from a real run.
    assert "- jax 0.4.35: " + second["observations"]["0.4.35"]["came_from"]["not_reused"] in markdown
    # And back without the variable: the first run's probes answer, and the report says why they matched.
    monkeypatch.delenv("JAX_THREEFRY_PARTITIONABLE")
    releases.forget()
    run(releases, *argv)
    third = report_json(releases)
    assert releases.runs == []
    assert third["probed_now"] == []
    assert sorted(third["answered_by_cache"], key=Version) == sorted(first["probed_now"], key=Version)
    assert third["observations"]["0.5.0"]["came_from"]["matched"].endswith("JAX/XLA variables: none set")


def test_each_probe_keeps_its_output_tail_and_whole_log(machine: Callable[..., FakeReleases], tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    releases = machine()
    monkeypatch.delenv("JAX_THREEFRY_PARTITIONABLE", raising=False)
    script = tmp_path / "repro.py"
    script.write_text(NOISY_SCRIPT)
    run(releases, "--script", str(script), "--good", "0.4.35", "--bad", "0.6.0")
    data = report_json(releases)
    seen = data["observations"]["0.5.0"]["came_from"]
    assert seen["output_tail"] == [f"line {n} of jax 0.5.0" for n in range(15, 30)]  # bounded: the last 15
    log = Path(seen["log"])
    assert not log.is_absolute()
    assert log.parts[:3] == ("reports", "bisect", "probes")  # relative to the project
    whole = (releases.matrix.path.parent / log).read_text().splitlines()
    assert whole == [f"line {n} of jax 0.5.0" for n in range(30)]  # the whole output, beside the probe file
    markdown = (releases.matrix.results_dir.parent / f"bisect-{data['name']}.md").read_text()
    # Prose on purpose: the report quotes each probe's tail for the thread (the golden report's probes print nothing).
    assert "\n".join(seen["output_tail"][-2:]) in markdown


def era(releases: FakeReleases, version: str) -> str | None:
    """The release's era cut-off, as the kit plans it from the index."""
    return plan_release(releases.matrix, version, InstallKey("cpu")).exclude_newer


def test_the_report_says_what_else_changed_between_the_two_ends(machine: Callable[..., FakeReleases]) -> None:
    releases = machine(verdicts("0.5.0"), numpy_moves_at="0.5.0")  # numpy moved with the era, as it did then
    run(releases, "--check", "scaling", "--good", "0.4.35", "--bad", "0.6.0")
    data = report_json(releases)
    changed = data["what_else_changed"][0]
    assert (changed["before"], changed["after"]) == ("0.4.38", "0.5.0")
    assert changed["packages"] == {"jaxlib": {"before": "0.4.38", "after": "0.5.0"},
                                   "numpy": {"before": "2.2.1", "after": "2.2.2"}}  # scipy did not change
    assert changed["era"] == {"before": era(releases, "0.4.38"), "after": era(releases, "0.5.0")}
    markdown = (releases.matrix.results_dir.parent / f"bisect-{data['name']}.md").read_text()
    assert "--pin numpy==2.2.1" in markdown  # prose on purpose: the report's hint how to hold it (in no JSON key)


@pytest.mark.parametrize(("behaviour", "mode", "outcome"), [("kill", "skip", "skip"), ("kill", "bad", "bad"),
                                                            ("hang", "good", "good")])
def test_script_crash_and_timeout(machine: Callable[..., FakeReleases], tmp_path: Path, behaviour: str,
                                  mode: str, outcome: str) -> None:
    releases = machine()
    exits: dict[str, Any] = {"0.4.35": 0, "0.4.36": behaviour, "0.4.37": 1}
    script = write_script(tmp_path, exits)
    run(releases, "--script", str(script), "--good", "0.4.35", "--bad", "0.4.37", "--crash", mode, "--timeout", "5")
    data = report_json(releases)
    assert data["outcomes"]["0.4.36"] == outcome
    assert data["observations"]["0.4.36"]["found"]["status"] == ("crashed" if behaviour == "kill" else "timed-out")


def test_timeout_reads_as_such_and_is_remembered(machine: Callable[..., FakeReleases], tmp_path: Path) -> None:
    releases = machine()
    # Timeouts far above a fake release's start on a loaded machine (1 s failed there): only the hang may reach them.
    script = write_script(tmp_path, {"0.4.34": 0, "0.4.35": 0, "0.4.36": "hang", "0.4.37": 1, "0.4.38": 1})
    run(releases, "--script", str(script), "--good", "0.4.35", "--bad", "0.4.37", "--crash", "bad", "--timeout", "5")
    timed_out = report_json(releases)
    assert timed_out["outcomes"]["0.4.36"] == "bad"  # counted bad by --crash bad
    assert timed_out["observations"]["0.4.36"]["found"]["status"] == "timed-out"
    assert timed_out["observations"]["0.4.36"]["cost"]["timeout_s"] == 5
    # Other bounds over the same script: the timeout is known, not waited for again ...
    run(releases, "--script", str(script), "--good", "0.4.34", "--bad", "0.4.38", "--crash", "bad", "--timeout", "5",
        "--all")
    data = report_json(releases, name="*-all")
    assert "0.4.36" in data["answered_by_cache"]
    assert "0.4.36" not in data["probed_now"]
    # ... but a longer timeout deserves a new try.
    run(releases, "--script", str(script), "--good", "0.4.35", "--bad", "0.4.37", "--crash", "bad", "--timeout", "8")
    assert report_json(releases, name="*0.4.37-cpu")["probed_now"] == ["0.4.36"]


def test_all_checks_the_labels_of_the_bounds(machine: Callable[..., FakeReleases]) -> None:
    releases = machine(verdicts("0.5.1"))
    run(releases, "--check", "scaling", "--good", "0.4.35", "--bad", "0.5.0", "--all")  # 0.5.0 is still good
    data = report_json(releases)
    assert data["bounds_tested"] == {"--good": {"version": "0.4.35", "wanted": "good", "tested": "good"},  # as given
                                     "--bad": {"version": "0.5.0", "wanted": "bad", "tested": "good"}}  # not bad
    assert data["observations"]["0.5.0"]["found"]["verdict"] == "unaffected"


def test_release_notes_are_one_line_of_links_when_unreachable(machine: Callable[..., FakeReleases]) -> None:
    releases = machine({**verdicts("0.5.1"), "0.5.0": "crash"})
    run(releases, "--check", "scaling", "--good", "0.4.35", "--bad", "0.6.0")  # ambiguous: 0.5.0 or 0.5.1
    notes = report_json(releases)["release_notes"]
    assert len(notes) == 1
    assert "offline in the tests" in notes[0]
    assert "[jax 0.5.0](https://github.com/jax-ml/jax/blob/jax-v0.5.0/CHANGELOG.md)" in notes[0]
    assert "[jax 0.5.1](" in notes[0]


def test_help_explains_git_bisect_run_codes(capsys: pytest.CaptureFixture[str],
                                            machine: Callable[..., FakeReleases]) -> None:
    assert driver.main(machine().matrix, ["--help"], print) == 0
    # Prose on purpose: the help is the behaviour, and its table of exit codes is what a script author reads.
    assert re.search(r"`git bisect run` reads it:\n +0 +good\n +125 +skip .*\n(.*\n)*?.*over --timeout: crashed",
                     capsys.readouterr().out)


# --------------------------------------------------------------------------
# The report


def test_report_has_links_notes_and_reproduce_line(machine: Callable[..., FakeReleases], tmp_path: Path) -> None:
    releases = machine(verdicts("0.5.3", fix=True), built=["0.4.35", "0.6.0"])  # the rest are built as probed
    notes = tmp_path / "CHANGELOG.md"
    notes.write_text("# Changelog\n\n## JAX 0.6.0 (April 16, 2025)\n\n* newer\n\n"
                     "## jax 0.5.3 (March 19, 2025)\n\n* Bug fixes\n  * Fixed sharding of batched `slogdet`.\n"
                     "  * Fixed a typo in the docs.\n\n"
                     "## jax 0.5.2 (Mar 4, 2025)\n\n* older\n")
    argv = ["--check", "scaling", "--good", "0.6.0", "--bad", "0.4.35", "--changelog", str(notes)]
    run(releases, *argv)
    data = report_json(releases)
    assert data["compare"] == "https://github.com/jax-ml/jax/compare/jax-v0.5.2...jax-v0.5.3"
    # Prose on purpose, a quoted changelog: only the entry that names what the check's script calls (slogdet), under
    # its group; then one line, the count and the link (the other 0.5.3 entry and the other releases' are left out).
    assert data["release_notes"][:-1] == ["## jax 0.5.3 (March 19, 2025)", "", "* Bug fixes", "",
                                          "  * Fixed sharding of batched `slogdet`.", ""]
    # Outside the project and the home folder: a placeholder, never this machine's path (kit/reproduce_line.py).
    assert data["reproduce"] == "nox -s bisect -- --check scaling --good 0.6.0 --bad 0.4.35 --changelog '<CHANGELOG>'"
    assert [c["version"] for c in data["candidates"]] == RELEASES[1:]
    assert sorted(data["environments_reused_now"]) == ["0.4.35", "0.6.0"]
    assert data["environments_built_now"]
    assert set(data["environments_built_now"]) == set(data["probed_now"]) - {"0.4.35", "0.6.0"}
    assert data["probes"] == len(data["outcomes"])


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


# --------------------------------------------------------------------------
# Rounds: --jobs K side by side here, and --slurm (sbatch and squeue stood in for, the tasks run in-process)


def test_jobs_probe_k_releases_per_round_and_name_the_same_release(machine: Callable[..., FakeReleases]) -> None:
    releases = machine(verdicts("0.5.1"))
    code, _lines = run(releases, "--check", "scaling", "--good", "0.4.34", "--bad", "0.6.0", "--jobs", "3")
    assert code == 0
    data = report_json(releases)
    assert (data["last_same"], data["first_different"]) == ("0.5.0", "0.5.1")
    assert (data["jobs"], data["slurm"]) == (3, False)  # side by side on this machine
    assert data["rounds"][0] == ["0.4.34", "0.6.0"]  # both bounds in the first round
    assert all(len(batch) <= 3 for batch in data["rounds"])
    assert len(data["rounds"]) <= 3
    run(releases, "--check", "scaling", "--good", "0.4.34", "--bad", "0.6.0", "--fresh")
    one_by_one = report_json(releases)
    assert one_by_one["first_different"] == "0.5.1"
    assert len(one_by_one["rounds"]) > len(data["rounds"])


def fake_cluster(monkeypatch: pytest.MonkeyPatch, matrix: Any) -> list[str]:
    """sbatch runs each array task of the job script at once, in-process, with SLURM's variables; squeue is empty."""
    submitted: list[str] = []

    def sbatch(script: Path) -> str:
        job_id = str(100 + len(submitted))
        submitted.append(script.read_text())
        job_dir = script.parent
        count = len(json.loads((job_dir / cluster.SPEC).read_text())["candidates"])
        for task in range(count):
            with monkeypatch.context() as node:
                for name, value in (("SLURM_JOB_ID", f"{job_id}{task}"), ("SLURM_ARRAY_JOB_ID", job_id),
                                    ("SLURM_ARRAY_TASK_ID", str(task)), ("SLURMD_NODENAME", "node01")):
                    node.setenv(name, value)
                driver.run_task(matrix, [str(job_dir), str(task)], lambda line: None)
        return job_id

    monkeypatch.setattr(cluster, "sbatch", sbatch)
    monkeypatch.setattr(cluster, "require_sbatch", lambda: None)
    monkeypatch.setattr(driver, "require_sbatch", lambda: None)
    monkeypatch.setattr(driver, "require_controller", lambda: None)
    monkeypatch.setattr("kit.slurm.follow.queued_states", lambda job_id: {})
    return submitted


def test_slurm_runs_each_probe_as_an_array_task_and_the_report_names_job_and_node(
        machine: Callable[..., FakeReleases], monkeypatch: pytest.MonkeyPatch) -> None:
    releases = machine(verdicts("0.5.1"), not_installable=["0.5.2"], built=())  # built here as they are probed
    submitted = fake_cluster(monkeypatch, releases.matrix)
    code, _lines = run(releases, "--check", "scaling", "--good", "0.4.34", "--bad", "0.6.0", "--slurm", "--jobs", "3",
                       "--partition", "gpu", "--time", "00:20:00")
    assert code == 0
    data = report_json(releases)
    assert (data["last_same"], data["first_different"]) == ("0.5.0", "0.5.1")
    assert (data["jobs"], data["slurm"]) == (3, True)
    assert data["rounds"][0] == ["0.4.34", "0.6.0"]
    assert all("0.5.2" not in batch for batch in data["rounds"])  # ruled out by the index: no place in a round
    assert data["observations"]["0.5.2"]["came_from"]["source"] == "index"
    assert "#SBATCH --array=0-1" in submitted[0]
    assert "#SBATCH --partition=gpu" in submitted[0]
    assert "-m kit probe" in submitted[0]
    assert "#SBATCH --time=00:20:00" in submitted[0]
    ran = [v for v, seen in data["observations"].items() if seen["came_from"]["source"] == "run"]
    assert ran
    assert all(re.fullmatch(r"SLURM job 1\d\d_\d on node01", data["observations"][v]["came_from"]["job"]) for v in ran)
    assert data["observations"]["0.4.34"]["came_from"]["job"] == "SLURM job 100_0 on node01"  # the first array's task 0
    assert data["observations"]["0.4.34"]["installed"]["environment"] == "built"  # built here, on the login node, before submission
    assert set(releases.versions_run) == set(ran)  # the array tasks ran the releases' own python
    markdown = (releases.matrix.results_dir.parent / f"bisect-{data['name']}.md").read_text()
    # Prose on purpose: the probe table is the only rendering of a probe's job, and no other test renders one.
    assert "SLURM job 100_0 on node01 |" in markdown


def test_a_pin_holds_a_package_in_every_probe_and_the_report_says_so(machine: Callable[..., FakeReleases]) -> None:
    releases = machine(verdicts("0.5.0"), numpy_moves_at="0.5.0")
    run(releases, "--check", "scaling", "--good", "0.4.35", "--bad", "0.6.0")
    releases.forget()
    code, _lines = run(releases, "--check", "scaling", "--good", "0.4.35", "--bad", "0.6.0", "--pin", "NumPy==2.2.1")
    assert code == 0
    assert releases.prepared
    assert set(releases.prepared_pins) == {("numpy==2.2.1",)}
    data = report_json(releases, "scaling-good0.4.35-bad0.6.0-cpu-pin-numpy-2.2.1")
    assert data["first_different"] == "0.5.0"
    assert releases.runs  # the unpinned probes are another identity
    assert data["probed_now"]
    assert all(seen["installed"]["pins"] == ["numpy==2.2.1"] for seen in data["observations"].values())
    assert "requirements" in data["observations"]["0.5.0"]["came_from"]["not_reused"]  # and says why it was not reused
    changed = data["what_else_changed"][0]
    assert "numpy" not in changed["packages"]
    assert changed["held"] == ["numpy==2.2.1"]


@pytest.mark.parametrize(("pins", "message"), [
    (["numpy>=2"], "NAME==VERSION"), (["numpy==2.*"], "NAME==VERSION"), (["jaxlib==0.5.0"], "what a bisect walks"),
    (["numpy==2.2.1", "numpy==2.2.2"], "at two versions")])
def test_a_pin_is_one_package_at_one_version(pins: list[str], message: str) -> None:
    with pytest.raises(UsageError, match=re.escape(message)):
        driver.parse_options(PLAIN_MATRIX, ["--check", "scaling", *[arg for pin in pins for arg in ("--pin", pin)]])


def test_slurm_and_jobs_refuse_what_they_cannot_do() -> None:
    with pytest.raises(UsageError, match="--metric runs one probe at a time"):
        driver.parse_options(PLAIN_MATRIX, ["--check", "scaling", "--good", "0.4.35", "--bad", "0.6.0", "--metric", "x",
                                            "--slurm"])
    with pytest.raises(UsageError, match="go with --slurm"):
        driver.parse_options(PLAIN_MATRIX, ["--check", "scaling", "--partition", "gpu"])
    with pytest.raises(UsageError, match="1 or more"):
        driver.parse_options(PLAIN_MATRIX, ["--check", "scaling", "--jobs", "0"])
