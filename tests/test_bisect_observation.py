"""kit.bisect.observation: one probe's answer in four parts, and the flat form earlier files hold."""

from __future__ import annotations

import json
from dataclasses import fields
from pathlib import Path
from typing import Any

import pytest

from kit.bisect.observation import _PARTS, _SHAPES, CameFrom, Cost, Found, Installed, Observation
from kit.bisect.probe.cache import ProbeCache
from kit.records import Identity, Source, Status, run_identity
from tests.observations import observed

ROOT = Path(__file__).resolve().parent.parent
COMMITTED = sorted((ROOT / "docs" / "evidence").glob("bisect-*.json"))  # the bisect reports kept for the docs


def identity(**changes: Any) -> Identity:
    return run_identity(subject={"script_sha256": "abc"}, jax="0.5.0", backend="cpu", python="3.12",
                        packages={"jax": "0.5.0", "jaxlib": "0.5.0"}, requirements=["jax[cpu]==0.5.0"],
                        exclude_newer=None, hardware={}, variables={}, **changes)


def test_each_part_holds_its_own_fields() -> None:
    seen = observed("ran", "affected", "exit 1", "cache", by="bisect-a", seconds=12.5, jaxlib="0.5.0",
                    flipped=True)
    assert seen.found == Found("ran", "affected", "exit 1", flipped=True)
    assert seen.came_from == CameFrom("cache", by="bisect-a")
    assert seen.cost == Cost(seconds=12.5)
    assert seen.installed == Installed(jaxlib="0.5.0")


def test_a_change_touches_only_the_part_it_names() -> None:
    seen = observed("ran", "affected", "exit 1", by="bisect-a", seconds=12.5, pins=["numpy==2.2.1"])
    cached = seen.with_came_from(source="cache", matched="check, release")
    assert (cached.found, cached.cost, cached.installed) == (seen.found, seen.cost, seen.installed)
    assert cached.came_from == CameFrom("cache", by="bisect-a", matched="check, release")
    assert seen.came_from.source == "run"  # frozen: the original is unchanged


def test_an_observation_is_written_in_parts_and_reads_back() -> None:
    seen = observed("timed-out", None, "did not finish", "cache", timeout_s=60, packages={"jax": "0.5.0"},
                    output_tail=["last line"], samples=[1.5, 2])
    saved = json.loads(json.dumps(seen.to_json()))
    assert sorted(saved) == ["came_from", "cost", "found", "installed"]
    assert saved["cost"]["timeout_s"] == 60
    assert Observation.from_json(saved) == seen


@pytest.mark.parametrize("committed", COMMITTED, ids=[p.name for p in COMMITTED])
def test_the_committed_reports_observations_read_flat_ones_by_migration(committed: Path) -> None:
    observations = json.loads(committed.read_text(encoding="utf-8"))["observations"]
    assert observations
    for version, saved in observations.items():
        seen = Observation.from_json(saved)
        parts = seen.to_json()
        if "found" not in saved:  # written before the split: every field lands in exactly one part, unchanged
            for name, value in saved.items():
                holding = [part for part, given in parts.items() if name in given]
                assert holding, f"{version}: {name} was dropped"
                assert parts[holding[0]][name] == value, f"{version}: {name}"
        assert Observation.from_json(parts) == seen


def test_a_probe_kept_in_the_flat_form_of_schema_2_still_answers(tmp_path: Path) -> None:
    cache = ProbeCache(tmp_path)
    flat = {"status": "ran", "verdict": "affected", "reason": "exit 1", "source": "run", "by": "bisect-a",
            "seconds": 12.5, "jaxlib": "0.5.0", "pins": ["numpy==2.2.1"]}
    path = cache.path(identity())
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps({"schema": 2, "identity": identity().to_json(), "observation": flat}))
    assert cache.get(identity(), timeout_s=60) == observed("ran", "affected", "exit 1", by="bisect-a", seconds=12.5,
                                                           jaxlib="0.5.0", pins=["numpy==2.2.1"])


@pytest.mark.parametrize(("part", "name", "value"), [
    ("found", "status", 5), ("found", "samples", [1, "2"]), ("came_from", "taken_from", 3),
    ("cost", "timeout_s", 1.5), ("cost", "seconds", True), ("installed", "extra_packages", {"flax": 1}),
])
def test_a_field_of_the_wrong_shape_is_named(part: str, name: str, value: object) -> None:
    saved = observed("ran", "affected", "exit 1").to_json()
    with pytest.raises(ValueError, match=f"'{name}'"):
        Observation.from_json({**saved, part: {**saved[part], name: value}})


def test_a_part_that_is_not_an_object_or_a_missing_status_is_named() -> None:
    saved = observed("ran", "affected", "exit 1").to_json()
    with pytest.raises(ValueError, match="'cost' is not a JSON object"):
        Observation.from_json({**saved, "cost": [1]})
    with pytest.raises(ValueError, match="has no 'verdict'"):
        Observation.from_json({**saved, "found": {"status": "ran", "reason": ""}})


def test_every_declared_field_type_has_a_shape() -> None:
    declared = {str(f.type) for kind in _PARTS.values() for f in fields(kind)}
    assert declared <= set(_SHAPES), f"no JSON shape for {sorted(declared - set(_SHAPES))}"


def test_a_status_and_a_source_are_their_members_from_where_they_are_made() -> None:
    seen = observed("timed-out", None, "did not finish", "cache")
    assert seen.found.status is Status.TIMED_OUT and seen.came_from.source is Source.CACHE
    with pytest.raises(ValueError):
        Found("exploded", None, "not a status")
    with pytest.raises(ValueError):
        CameFrom("guessed")


def test_an_answer_of_several_steps_is_its_last_step_and_is_written_as_one_word() -> None:
    came = CameFrom("record+run")  # an inconclusive record, then a run: as earlier files hold it
    assert (came.source, came.earlier, came.steps, came.shown) == (Source.RUN, (Source.RECORD,),
                                                                   (Source.RECORD, Source.RUN), "record+run")
    seen = Observation(Found("ran", "affected", "exit 1"), came)
    saved = json.loads(json.dumps(seen.to_json()))
    assert saved["came_from"]["source"] == "record+run" and "earlier" not in saved["came_from"]
    assert Observation.from_json(saved) == seen
    assert seen.with_came_from(source=Source.CACHE).came_from.steps == (Source.CACHE,)  # the cache's answer: all of it
    with pytest.raises(ValueError, match="'source'"):
        Observation.from_json({**saved, "came_from": {"source": "record+guess"}})


def test_each_part_s_typed_changes_name_exactly_its_fields() -> None:
    """`Observation.with_found` and the rest take typed keywords: a field added to a part must be added there too."""
    from kit.bisect.observation import CameFromChanges, CostChanges, FoundChanges, InstalledChanges

    for kind, changes in ((Found, FoundChanges), (CameFrom, CameFromChanges), (Cost, CostChanges),
                          (Installed, InstalledChanges)):
        assert set(changes.__annotations__) == {f.name for f in fields(kind)}, kind.__name__
