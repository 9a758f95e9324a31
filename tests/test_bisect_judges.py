"""kit/bisect/probe/judges.py: how `VerdictJudge` turns a subject's runs into one observation, and what it keeps.

The subject here is a stand-in that answers from a script of records (the judge is what is tested; the release
subject and the runner have their own suites): it counts its runs, so each rule about *how many* looks a probe
takes, and which observations the probe cache keeps, is checked by number.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Iterator

import pytest

from kit.bisect.candidates import Candidate
from kit.bisect.probe.given import given_by_release
from kit.bisect.probe.judges import VerdictJudge, probe_line
from kit.bisect.options import BisectOptions
from kit.bisect.observation import Observation
from kit.bisect.outcomes import observation_of
from kit.bisect.probe.cache import ProbeCache
from kit.bisect.search import ProbeOutcome
from kit.errors import ArchiveUnreachable
from kit.install.environment import Prepared
from kit.records import Identity, Record
from tests import given_runs
from tests.given_runs import CHECK, handed
from tests.observations import observed


def identity(version: str, jaxlib: str | None = None) -> Identity:
    return Identity(subject={"check": "scaling"}, jax=version, backend="cpu", python="3.13",
                    packages={"jax": version, "jaxlib": jaxlib or version, "numpy": "2.1.3"},
                    install={"exclude_newer": "2024-11-05T00:00:00Z"}, hardware={"cpu_model": "test"}, variables={})


BUILT = Prepared(plan=None, resolution=None, environment=None)
"""Nothing resolved and nothing built: the judge keeps such a probe (an existing interpreter's run is one)."""


class ScriptedSubject:
    """Answers each run of a release with the next record of its script, and counts the runs."""

    def __init__(self, runs: dict[str, list[dict[str, Any]]], locked: dict[str, Identity] | None = None,
                 prepared: Prepared = BUILT, recorded: Observation | None = None,
                 identity_of: dict[str, Identity] | None = None) -> None:
        self.script: dict[str, Iterator[dict[str, Any]]] = {key: iter(records) for key, records in runs.items()}
        self.ran: list[str] = []
        self.locked, self.prepared, self.recorded_answer = locked or {}, prepared, recorded
        self.identity_of = identity_of or {}
        self.candidates: dict[str, Candidate] = {}
        self.timeout = 60
        self.unreachable = False

    def name_of(self, key: str) -> str:
        return f"jax {key}"

    def resolved(self, key: str) -> tuple[str | None, str | None]:
        return key, key

    def done(self, key: str) -> None:
        pass

    def close(self) -> None:
        pass

    def locked_identity(self, key: str) -> Identity | None:
        return self.locked.get(key)

    def prepare(self, key: str) -> Prepared:
        if self.unreachable:
            raise ArchiveUnreachable("jaxlib 0.4.1 is only in JAX's archive, which did not answer")
        return self.prepared

    def identity(self, key: str, prepared: Prepared) -> Identity:
        return self.identity_of.get(key) or identity(key)

    def recorded(self, here: Identity, key: str) -> Observation | None:
        return self.recorded_answer

    def environment_state(self, key: str) -> str | None:
        return "reused"

    def run(self, key: str, prepared: Prepared, log_file: Path | None = None) -> Record:
        self.ran.append(key)
        record = Record(next(self.script[key]))
        if log_file is not None:
            with log_file.open("a") as log:
                log.write(f"run {len(self.ran)}: {record.get('verdict')}\n")
        return record


def ran(verdict: str | None, status: str = "ran", **evidence: Any) -> dict[str, Any]:
    return {"status": status, "verdict": verdict, "reason": f"it was {verdict}", "evidence": evidence}


def options(check: str | None = "scaling", confirm: int = 0, pins: tuple[str, ...] = ()) -> BisectOptions:
    return BisectOptions(check=check, script=None if check else Path("r.py"), good="0.4.35", bad="0.6.0", confirm=confirm,
                   pins=pins)


def candidate(version: str) -> Candidate:
    return Candidate(version, (f"jax=={version}",), None, "3.13", version)


@pytest.fixture
def cache(tmp_path: Path) -> ProbeCache:
    return ProbeCache(tmp_path / "probes")


def judge(cache: ProbeCache, project: Path, **settings: Any) -> VerdictJudge:
    asked = options(**settings)
    return VerdictJudge(asked.specs.runs, asked.confirm, cache, "test-bisect", project, settings.get("pins", ()))


def test_an_inconclusive_check_is_run_once_more_and_the_second_look_counts(cache: ProbeCache, tmp_path: Path) -> None:
    subject = ScriptedSubject({"0.5.0": [ran("inconclusive"), ran("unaffected")]})
    look = judge(cache, tmp_path).observe(subject, candidate("0.5.0"))
    assert subject.ran == ["0.5.0", "0.5.0"]
    assert look.ran_now
    assert (look.observation.found.verdict, look.observation.found.runs, look.observation.found.flipped) == (
        "unaffected", ["inconclusive", "unaffected"], True)
    # Both looks' output is in the one log, in order, and the report names it relative to the project.
    assert look.observation.came_from.output_tail[-2:] == ["run 1: inconclusive", "run 2: unaffected"]
    assert not Path(look.observation.came_from.log).is_absolute()
    assert look.observation.came_from.by == "test-bisect"
    assert look.observation.installed.jaxlib == "0.5.0"


def test_a_check_inconclusive_twice_is_left_inconclusive_not_run_a_third_time(cache: ProbeCache, tmp_path: Path) -> None:
    subject = ScriptedSubject({"0.5.0": [ran("inconclusive"), ran("inconclusive"), ran("affected")]})
    look = judge(cache, tmp_path).observe(subject, candidate("0.5.0"))
    assert len(subject.ran) == 2
    assert look.observation.found.verdict == "inconclusive"


@pytest.mark.parametrize(("settings", "record"), [
    ({"check": None}, ran("inconclusive")),  # a script's 125 means "cannot test": asking again gives the same
    ({}, ran("inconclusive", exception={"type": "ImportError", "message": "no flax"})),  # it would die of it again
    ({}, ran("inconclusive", jax_cannot_run={"error": "jaxlib's extension did not load"})),
])
def test_an_inconclusive_look_that_would_only_repeat_itself_is_not_run_again(
        cache: ProbeCache, tmp_path: Path, settings: dict[str, Any], record: dict[str, Any]) -> None:
    subject = ScriptedSubject({"0.5.0": [record, ran("unaffected")]})
    look = judge(cache, tmp_path, **settings).observe(subject, candidate("0.5.0"))
    assert subject.ran == ["0.5.0"]
    assert look.observation.found.verdict == "inconclusive"


def test_confirm_runs_a_decided_probe_that_many_more_times_and_a_flip_is_too_noisy(
        cache: ProbeCache, tmp_path: Path) -> None:
    steady = ScriptedSubject({"0.5.0": [ran("affected")] * 3})
    assert judge(cache, tmp_path, confirm=2).observe(steady, candidate("0.5.0")).observation.found.verdict == "affected"
    assert len(steady.ran) == 3
    noisy = ScriptedSubject({"0.5.1": [ran("affected"), ran("affected"), ran("unaffected")]})
    seen = judge(cache, tmp_path, confirm=2).observe(noisy, candidate("0.5.1")).observation
    assert (seen.found.verdict, seen.found.flipped, seen.found.runs) == ("inconclusive", True, ["affected", "affected", "unaffected"])


def test_confirm_does_not_repeat_a_run_that_decided_nothing(cache: ProbeCache, tmp_path: Path) -> None:
    # A crash is not a verdict to confirm: --confirm 2 must not run a crashed release twice more.
    subject = ScriptedSubject({"0.5.0": [ran(None, status="crashed")] * 3})
    seen = judge(cache, tmp_path, confirm=2).observe(subject, candidate("0.5.0")).observation
    assert len(subject.ran) == 1
    assert seen.found.status == "crashed"


def test_a_kept_probe_answers_the_next_look_at_the_same_identity_without_a_run(
        cache: ProbeCache, tmp_path: Path) -> None:
    first = ScriptedSubject({"0.5.0": [ran("affected")]})
    judge(cache, tmp_path).observe(first, candidate("0.5.0"))
    again = ScriptedSubject({"0.5.0": []}, locked={"0.5.0": identity("0.5.0")})
    look = judge(cache, tmp_path, pins=("numpy==2.1.3",)).observe(again, candidate("0.5.0"))
    assert again.ran == []
    assert not look.ran_now
    assert (look.observation.came_from.source, look.observation.found.verdict) == ("cache", "affected")
    assert look.observation.came_from.matched
    assert look.observation.installed.pins == ["numpy==2.1.3"]  # this run's pins, not the old one's
    assert judge(cache, tmp_path).remembered(again, "0.5.0") is not None


def test_an_identity_other_than_the_lock_s_is_looked_up_again_once_prepared(cache: ProbeCache, tmp_path: Path) -> None:
    # The lock said jaxlib 0.5.0 (nothing kept for it); the environment prepared has 0.5.1, whose answer is kept:
    # that answer counts, without a run (a judge that only asked about the lock would run it again).
    cache.put(identity("0.5.0", jaxlib="0.5.1"), observed("ran", "affected", "kept"))
    subject = ScriptedSubject({"0.5.0": []}, locked={"0.5.0": identity("0.5.0")},
                              identity_of={"0.5.0": identity("0.5.0", jaxlib="0.5.1")})
    look = judge(cache, tmp_path).observe(subject, candidate("0.5.0"))
    assert subject.ran == []
    assert (look.observation.came_from.source, look.observation.found.verdict) == ("cache", "affected")


def test_a_kept_probe_of_another_jaxlib_is_not_reused_and_the_difference_is_named(
        cache: ProbeCache, tmp_path: Path) -> None:
    cache.put(identity("0.5.0"), observed("ran", "affected", "kept"))
    subject = ScriptedSubject({"0.5.0": [ran("unaffected")]}, identity_of={"0.5.0": identity("0.5.0", jaxlib="0.5.1")})
    look = judge(cache, tmp_path).observe(subject, candidate("0.5.0"))
    assert subject.ran == ["0.5.0"]
    assert look.observation.found.verdict == "unaffected"
    assert "jaxlib" in look.observation.came_from.not_reused


def test_fresh_ignores_the_cache_but_still_keeps_what_it_measured(tmp_path: Path) -> None:
    fresh = ProbeCache(tmp_path / "probes", read=False)
    fresh.put(identity("0.5.0"), observed("ran", "affected", "kept"))
    subject = ScriptedSubject({"0.5.0": [ran("unaffected")]}, locked={"0.5.0": identity("0.5.0")})
    assert judge(fresh, tmp_path).observe(subject, candidate("0.5.0")).observation.found.verdict == "unaffected"
    kept = ProbeCache(tmp_path / "probes").get(identity("0.5.0"), 60)
    assert kept is not None
    assert kept.found.verdict == "unaffected"  # replaced, not left stale


@pytest.mark.parametrize(("prepared", "record"), [
    # Resolved but not built: a failed install here, worth another try, not a fact about the release.
    (Prepared(plan=None, resolution=object(), environment=None), ran(None, status="not-installable")),  # type: ignore[arg-type]
    # JAX itself did not import: no behaviour was shown.
    (BUILT, ran("inconclusive", jax_cannot_run={"error": "ImportError: libtpu"})),
    # The kit's own files changed while it ran (kit.run.kit_files): its verdict is not trusted, so not kept
    # (a rerun once they are restored must run it, not answer "skip" from the cache).
    (BUILT, ran("inconclusive", kit_files_changed=["kit/history/leads.py (changed)"])),
])
def test_a_probe_that_showed_nothing_about_the_release_is_not_kept(
        cache: ProbeCache, tmp_path: Path, prepared: Prepared, record: dict[str, Any]) -> None:
    subject = ScriptedSubject({"0.5.0": [record, record]}, prepared=prepared)  # an inconclusive check runs twice
    assert judge(cache, tmp_path).observe(subject, candidate("0.5.0")).ran_now
    assert cache.get(identity("0.5.0"), 60) is None


def test_a_conclusive_current_record_answers_and_an_inconclusive_one_is_a_first_look(
        cache: ProbeCache, tmp_path: Path) -> None:
    recorded = observation_of(Record(ran("affected")), source="record")
    subject = ScriptedSubject({"0.5.0": []}, recorded=recorded)
    look = judge(cache, tmp_path).observe(subject, candidate("0.5.0"))
    assert subject.ran == []
    assert look.observation.came_from.source == "record"
    assert look.observation.installed.packages["numpy"] == "2.1.3"
    first = ScriptedSubject({"0.5.0": [ran("unaffected")]}, recorded=observation_of(Record(ran("inconclusive")), "record"))
    seen = judge(cache, tmp_path).observe(first, candidate("0.5.0")).observation
    assert len(first.ran) == 1
    assert (seen.found.verdict, seen.came_from.shown) == ("unaffected", "record+run")  # the steps, one word


def test_an_unreachable_archive_skips_the_one_release_and_keeps_nothing(cache: ProbeCache, tmp_path: Path) -> None:
    subject = ScriptedSubject({"0.4.1": []})
    subject.unreachable = True
    look = judge(cache, tmp_path).observe(subject, candidate("0.4.1"))
    assert (look.observation.found.status, look.ran_now, subject.ran) == ("unreachable", False, [])
    assert "did not answer" in look.observation.found.reason
    assert not any(cache.folder.rglob("*.json"))


def test_the_probe_line_says_what_was_held_what_flipped_and_why_it_was_reused_or_not() -> None:
    seen = observed("ran", "inconclusive", "too noisy", "run", runs=["affected", "unaffected"], flipped=True,
                       pins=["numpy==2.2.1"], job="SLURM job 12_0 on node01", not_reused="jaxlib 0.5.0 → 0.5.1")
    line = probe_line("jax 0.5.0", seen, ProbeOutcome.SKIP, script=False)
    first, second = line.split("\n")
    assert first == ("probe jax 0.5.0 (holding numpy==2.2.1): skip [run, SLURM job 12_0 on node01] too noisy"
                     " — flipped: affected → unaffected")
    assert second == "  ran again: jaxlib 0.5.0 → 0.5.1"
    reused = probe_line("jax 0.5.0", observed("ran", "affected", "bad", "cache", matched="check, release"),
                        ProbeOutcome.BAD, script=True)
    assert reused == "probe jax 0.5.0: bad [cache] bad\n  reused: the same check, release"  # a script: no verdict named


# Runs handed to the bisect (triage's): taken without a run where they answer the probe, never kept.


def test_the_judge_takes_it_without_a_run_and_keeps_nothing_in_the_probe_cache(
        cache: ProbeCache, tmp_path: Path) -> None:
    here = given_runs.identity("0.6.0", CHECK)
    subject = ScriptedSubject({"0.6.0": []}, locked={"0.6.0": here}, identity_of={"0.6.0": here})
    judge = VerdictJudge(options(check=None).specs.runs, 0, cache, "test-bisect", tmp_path, given=given_by_release([handed("0.6.0", tmp_path)],
                                                                                           tmp_path))
    look = judge.observe(subject, candidate("0.6.0"))
    assert subject.ran == []
    assert not look.ran_now
    assert (look.observation.came_from.source, look.observation.found.verdict) == ("triage", "affected")
    assert cache.get(here, 60) is None
    assert not any(cache.folder.rglob("*.json"))  # the check did not run there
    assert judge.remembered(subject, "0.6.0") is None  # nor is it an earlier probe of the check


def test_a_run_in_another_install_is_probed_again_saying_why(cache: ProbeCache, tmp_path: Path) -> None:
    here = given_runs.identity("0.6.0", CHECK, numpy="2.2.0")  # the bisect's environment resolved another numpy
    subject = ScriptedSubject({"0.6.0": [ran("affected")]}, identity_of={"0.6.0": here})
    judge = VerdictJudge(options(check=None).specs.runs, 0, cache, "test-bisect", tmp_path, given=given_by_release([handed("0.6.0", tmp_path)],
                                                                                           tmp_path))
    look = judge.observe(subject, candidate("0.6.0"))
    assert subject.ran == ["0.6.0"]
    assert look.observation.came_from.source == "run"
    assert look.observation.came_from.not_reused == "triage's run was not taken: numpy 2.1.3 there, 2.2.0 here"
    assert cache.get(here, 60) is not None  # what the bisect ran itself is kept, as always


def test_an_earlier_probe_of_the_check_itself_comes_first(cache: ProbeCache, tmp_path: Path) -> None:
    here = given_runs.identity("0.6.0", CHECK)
    cache.put(here, observed("ran", "affected", "kept", by="an earlier bisect"))
    subject = ScriptedSubject({"0.6.0": []}, locked={"0.6.0": here})
    judge = VerdictJudge(options(check=None).specs.runs, 0, cache, "b", tmp_path, given=given_by_release([handed("0.6.0", tmp_path)], tmp_path))
    assert judge.observe(subject, candidate("0.6.0")).observation.came_from.source == "cache"
