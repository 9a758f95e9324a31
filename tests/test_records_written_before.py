"""Files the kit wrote before its outcome was typed still load, and read the same.

``tests/fixtures/written-schema-1/`` holds what the kit at 2b0cfeb wrote (schema 1, before the run's
outcome, explain's statuses and the fingerprint states were types): three records of the store (a
script whose failure JAX's own could not vouch for, a ``bad_if`` match, a release that could not be installed) and one
explained run kept for bisect's per-op probes (`kit.run.shared_runs`); and one probe-cache entry a commit
bisect wrote before (04bdf37). The typed outcome did not
change what a file holds (every word is a `str` enum member that JSON writes as the word), so
`SCHEMA` is still 1 and `MIGRATIONS` empty; these tests are what a schema bump must keep passing
through its migration.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from kit.hlo import FingerprintState
from kit.records import MIGRATIONS, SCHEMA, Record, Status, Verdict, load_records, parse_record
from kit.run import shared_runs

WRITTEN = Path(__file__).parent / "fixtures" / "written-schema-1"
RECORDS = ("script-jax-cannot-run.json", "script-bad-if-matched.json", "not-installable-no-jax.json")


def test_the_stored_shape_is_still_schema_1_with_nothing_to_migrate() -> None:
    # A bump to 2 must add MIGRATIONS[1] and keep the tests below passing on the schema-1 files.
    assert (SCHEMA, MIGRATIONS) == (1, {})


@pytest.mark.parametrize("name", RECORDS)
def test_a_record_written_before_reads_back_as_a_typed_record(name: str) -> None:
    text = (WRITTEN / name).read_text(encoding="utf-8")
    record = Record(parse_record(text))
    assert record.to_json() == json.loads(text)  # nothing rewritten on the way in
    assert isinstance(record.status, Status)
    assert record.verdict is None or isinstance(record.verdict, Verdict)


def test_each_record_s_outcome_is_read_as_it_was_written() -> None:
    outcomes = {name: Record(parse_record((WRITTEN / name).read_text(encoding="utf-8"))) for name in RECORDS}
    script = outcomes["script-jax-cannot-run.json"]  # it said affected, then `import jax.numpy` failed
    assert (script.status, script.verdict) == (Status.RAN, Verdict.INCONCLUSIVE)
    assert script.reason.endswith("it was: the batch is whole")
    assert script.evidence["jax_cannot_run"]["error"] == "ModuleNotFoundError: No module named 'jax.numpy'"
    assert script.metrics["solve"]["samples"] == [4.0, 4.5]
    matched = outcomes["script-bad-if-matched.json"]
    assert (matched.status, matched.verdict) == (Status.RAN, Verdict.AFFECTED)
    assert matched.evidence["bad_if"]["matched"] == "ValueError"
    unbuilt = outcomes["not-installable-no-jax.json"]
    assert (unbuilt.status, unbuilt.verdict) == (Status.NOT_INSTALLABLE, None)


def test_a_folder_of_them_loads_with_nothing_unusable(tmp_path: Path) -> None:
    for name in RECORDS:
        shutil.copy(WRITTEN / name, tmp_path / name)
    loaded = load_records(tmp_path)
    assert loaded.unusable == []
    assert sorted(r.check for r in loaded.records) == ["crash", "report", "scaling"]


def test_parse_record_gives_the_object_a_reader_of_schema_1_expects() -> None:
    text = (WRITTEN / "script-bad-if-matched.json").read_text(encoding="utf-8")
    assert parse_record(text)["schema"] == 1


def test_an_explained_run_kept_before_reads_back_with_typed_states(tmp_path: Path) -> None:
    kept = tmp_path / "kept.json"
    shutil.copy(WRITTEN / "kept-explained-run.json", kept)
    run = shared_runs.load(kept)
    assert run is not None
    written = json.loads(kept.read_text(encoding="utf-8"))
    assert [f.to_json() for f in run.fingerprints] == written["fingerprints"]
    assert all(isinstance(f.state, FingerprintState) for f in run.fingerprints)
    assert {f.state for f in run.fingerprints} == {FingerprintState.WHOLE, FingerprintState.GATHERED,
                                                   FingerprintState.EXPECTED, FingerprintState.COMMUNICATION}
    assert run.outcome.status is Status.RAN and run.outcome.verdict is Verdict.AFFECTED
    assert run.outcome.evidence["bad_if"] == {"matched": "ValueError", "pattern": "ValueError"}


def test_a_kept_run_with_a_state_this_kit_does_not_know_is_run_again_not_misread(tmp_path: Path) -> None:
    written = json.loads((WRITTEN / "kept-explained-run.json").read_text(encoding="utf-8"))
    written["fingerprints"][0]["state"] = "sideways"
    kept = tmp_path / "kept.json"
    kept.write_text(json.dumps(written), encoding="utf-8")
    assert shared_runs.load(kept) is None


@pytest.mark.parametrize("key, value", [("fields", ["ran"]), ("modules", {"name": "jit_f"}), ("fingerprints", None),
                                        ("output_tail", "one line")])
def test_a_kept_run_of_another_shape_is_run_again_not_misread(tmp_path: Path, key: str, value: object) -> None:
    written = json.loads((WRITTEN / "kept-explained-run.json").read_text(encoding="utf-8"))
    written[key] = value
    kept = tmp_path / "kept.json"
    kept.write_text(json.dumps(written), encoding="utf-8")
    assert shared_runs.load(kept) is None


def test_a_probe_kept_before_reads_back_from_the_cache_as_a_typed_observation(tmp_path: Path) -> None:
    # A probe-cache entry (schema 3) that the kit wrote on 2026-12-06 before the outcome was typed (04bdf37, a
    # commit probe of the dctn fix with `jax/` alone): found under its identity, its words now enums.
    from kit.bisect.probe.cache import ProbeCache
    from kit.records import Identity, Source

    saved = json.loads((WRITTEN / "probe-commit-dctn-fix.json").read_text())
    identity = Identity.from_json(saved["identity"])
    cache = ProbeCache(tmp_path)
    path = cache.path(identity)
    path.parent.mkdir(parents=True)
    shutil.copy(WRITTEN / "probe-commit-dctn-fix.json", path)
    observation = cache.get(identity, timeout_s=1800)
    assert observation is not None and cache.unusable == {}
    assert observation.found.status is Status.RAN and observation.came_from.source is Source.RUN
    assert observation.found.verdict == "unaffected"
    assert identity.subject["overlay_laid"] == "jax/ alone"
