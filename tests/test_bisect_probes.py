"""kit.bisect.probes: one probe of a check, answered from what is known first, run (once) otherwise.

A `Prober` on the fake machine (tests/fake_releases.py): candidates from the
index's metadata, the probe cache, records and runs all real; each test
asks it for one release and sees where the answer came from.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any, Callable

import pytest

from kit.bisect import driver
from kit.bisect.candidates import Candidate, list_candidates
from kit.bisect.options import DEFAULT_SCRIPT_TIMEOUT_S, parse_options
from kit.bisect.outcomes import Observation
from kit.bisect.probe_cache import ProbeCache, subject_key
from kit.bisect.probes import Prober
from kit.bisect.search import Outcome
from kit.install.release import open_index
from kit.run import runner
from tests.fake_releases import FakeReleases

RELEASES = ["0.5.0", "0.5.1", "0.5.2"]


@pytest.fixture
def machine(fake_releases: Callable[..., FakeReleases]) -> FakeReleases:
    return fake_releases(RELEASES, checks={"scaling": {"devices": [1, 2], "batch": 64, "timeout_s": 60}})


def prober(machine: FakeReleases, *flags: str, candidates: list[Candidate] | None = None) -> Prober:
    options = parse_options(machine.matrix, ["--check", "scaling", "--good", "0.5.0", "--bad", "0.5.2", *flags])
    index = open_index(machine.matrix)
    listed = candidates or list_candidates(machine.matrix, RELEASES, "cpu", index, ())
    cache = ProbeCache(driver.probe_cache_dir(machine.matrix), read=not options.fresh)
    return Prober(machine.matrix, options, listed, cache, subject_key(machine.matrix, options), "test", index,
                  lambda line: None)


def test_a_release_runs_once_and_its_observation_is_kept_for_every_later_bisect(machine: FakeReleases) -> None:
    machine.behave("0.5.1", "affected")
    assert prober(machine)("0.5.1") is Outcome.BAD
    assert machine.versions_run == ["0.5.1"] and machine.prepared == ["0.5.1"]
    machine.forget()
    again = prober(machine)
    assert again("0.5.1") is Outcome.BAD
    assert machine.runs == [] and machine.prepared == []  # known: nothing resolved, nothing run
    assert again.observations["0.5.1"].source == "cache" and again.ran_now == []
    assert prober(machine).known_outcomes() == {"0.5.1": Outcome.BAD}  # handed to the search before it starts


def test_fresh_measures_again(machine: FakeReleases) -> None:
    prober(machine)("0.5.1")
    machine.forget()
    machine.behave("0.5.1", "affected")
    fresh = prober(machine, "--fresh")
    assert fresh.known_outcomes() == {}
    assert fresh("0.5.1") is Outcome.BAD and machine.versions_run == ["0.5.1"]


def test_a_current_record_of_the_matrix_answers_without_a_run(machine: FakeReleases) -> None:
    machine.behave("0.5.0", "unaffected")
    runner.run_check(machine.matrix, runner.RunRequest(check="scaling", version="0.5.0"), lambda line: None)
    machine.forget()
    probe = prober(machine)
    assert probe("0.5.0") is Outcome.GOOD
    assert machine.runs == [] and machine.prepared == []
    assert probe.observations["0.5.0"].source == "record" and probe.ran_now == []


def test_what_the_index_already_says_is_not_installed_or_run(machine: FakeReleases) -> None:
    listed = list_candidates(machine.matrix, RELEASES, "cpu", open_index(machine.matrix), ())
    yanked = dataclasses.replace(listed[0], yanked="broken wheel")
    missing = dataclasses.replace(listed[1], problem="the index has no jaxlib 0.5.1 wheels", python=None)
    probe = prober(machine, candidates=[yanked, missing, listed[2]])
    assert probe("0.5.0") is Outcome.SKIP and probe("0.5.1") is Outcome.SKIP
    assert machine.runs == [] and machine.prepared == []
    assert [probe.observations[v].source for v in ("0.5.0", "0.5.1")] == ["index", "index"]
    assert probe.observations["0.5.0"].reason == "yanked from the index (broken wheel): not probed"
    assert probe.known_outcomes() == {}  # nor looked up in the cache


def test_a_release_without_a_lock_is_looked_up_once_it_is_prepared(machine: FakeReleases) -> None:
    prober(machine)("0.5.2")  # kept under the identity of the environment it ran in
    machine.forget()
    for lock in (machine.matrix.envs_dir / "locks").glob("jax-0.5.2-*.json"):
        lock.unlink()  # the environment is there, but nothing says what it installs without resolving
    probe = prober(machine)
    assert probe.known_outcomes() == {}  # nothing to know it by before the search starts
    assert probe("0.5.2") is Outcome.GOOD
    assert machine.prepared == ["0.5.2"] and machine.runs == []  # resolved (uv, the index), then found: not run
    assert probe.observations["0.5.2"].source == "cache"


def test_an_inconclusive_run_is_run_once_more_in_the_same_environment(machine: FakeReleases) -> None:
    machine.behave("0.5.1", "inconclusive", "affected")
    probe = prober(machine)
    assert probe("0.5.1") is Outcome.BAD
    assert machine.versions_run == ["0.5.1", "0.5.1"] and machine.prepared == ["0.5.1"]
    seen = probe.observations["0.5.1"]
    assert seen.runs == ["inconclusive", "affected"] and seen.flipped
    assert (seen.python, seen.jaxlib, seen.environment, seen.timeout_s) == ("3.11", "0.5.1", "reused", 60)


@pytest.mark.parametrize(("flags", "timeout"), [((), 60), (("--timeout", "5"), 5)])
def test_the_time_limit_is_the_command_lines_else_the_checks(machine: FakeReleases, flags: tuple[str, ...],
                                                              timeout: int) -> None:
    assert prober(machine, *flags).timeout == timeout


def test_a_script_without_a_limit_gets_the_default(machine: FakeReleases, tmp_path: Path) -> None:
    script = tmp_path / "repro.py"
    script.write_text("raise SystemExit(0)\n")
    options = parse_options(machine.matrix, ["--script", str(script), "--good", "0.5.0", "--bad", "0.5.2"])
    probe: Any = Prober(machine.matrix, options, [], ProbeCache(tmp_path), {}, "test", open_index(machine.matrix),
                        print)
    assert probe.timeout == DEFAULT_SCRIPT_TIMEOUT_S


def test_every_observation_made_is_logged_with_where_it_came_from(machine: FakeReleases) -> None:
    lines: list[str] = []
    options = parse_options(machine.matrix, ["--check", "scaling", "--good", "0.5.0", "--bad", "0.5.2"])
    index = open_index(machine.matrix)
    probe = Prober(machine.matrix, options, list_candidates(machine.matrix, RELEASES, "cpu", index, ()),
                   ProbeCache(driver.probe_cache_dir(machine.matrix)), subject_key(machine.matrix, options), "test",
                   index, lines.append)
    machine.behave("0.5.0", "crash")
    assert probe("0.5.0") is Outcome.SKIP  # --crash skip, the default
    assert lines[-1] == ("probe jax 0.5.0: skip [run] the repro crashed (exit code 1): "
                         "RuntimeError: fake crash of scaling on jax 0.5.0")
    assert isinstance(probe.observations["0.5.0"], Observation)
