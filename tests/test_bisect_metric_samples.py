"""kit/bisect/probe/metric_samples.py: a metric bisect's samples kept as they complete, and when a rerun may reuse them.

A whole resumed bisect is in tests/faults/test_metric_resume.py, files of the wrong types in
tests/faults/test_metric_samples_files.py; here the store is driven directly with a clock of the test's.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Callable

import pytest

from kit.bisect.probe import metric_samples
from kit.bisect.probe.metric_samples import MAX_AGE_H, MetricSamples

IDENTITY = {"subject": "s", "metric": "t_ms", "good": "0.6.0", "bad": "0.4.35", "backend": "cpu"}
BOUNDS = {"0.6.0": ("3.12", "0.6.0"), "0.4.35": ("3.11", "0.4.35")}
T0 = 1_764_000_000.0


def _store(folder: Path, read: bool = True, identity: dict[str, Any] = IDENTITY, machine: str = "m",
           bounds: dict[str, tuple[str, str]] = BOUNDS, clock: Callable[[], float] = lambda: T0,
           log: Callable[[str], None] = lambda _line: None) -> MetricSamples:
    return MetricSamples(folder, identity, machine, bounds, "bisect-1", read=read, log=log, clock=clock)


def test_the_file_is_named_by_the_identity_whatever_its_key_order(tmp_path: Path) -> None:
    reordered = dict(reversed(list(IDENTITY.items())))
    assert _store(tmp_path).path == _store(tmp_path, identity=reordered).path
    assert _store(tmp_path).path != _store(tmp_path, identity={**IDENTITY, "metric": "other"}).path


def test_nothing_kept_says_nothing_and_reuses_nothing(tmp_path: Path) -> None:
    store = _store(tmp_path)
    assert (store.note, store.reused, store.rounds(), store.unit, store.better) == ("", False, [], "", "lower")


def test_each_round_and_pair_is_on_disk_as_soon_as_it_is_added(tmp_path: Path) -> None:
    # Ctrl-C after add_round must lose nothing of that round: it is written then, not at the end.
    store = _store(tmp_path)
    store.add_round([1.0, 1.1], [2.0], 3.456, 4.0, "ms", "lower")
    assert json.loads(store.path.read_text())["rounds"][0]["good_s"] == 3.46
    store.add_pair("0.5.0", ("3.12", "0.5.0"), [1.0], [1.9], 2.0)
    again = _store(tmp_path)
    assert again.reused
    assert again.rounds() == [([1.0, 1.1], [2.0], 3.46, 4.0)]
    assert again.pairs("0.5.0", ("3.12", "0.5.0")) == [([1.0], [1.9], 2.0)]
    assert (again.unit, again.better) == ("ms", "lower")
    assert again.note == ("reusing the metric samples measured from 2025-11-24T16:00:00Z by bisect-1: 1 rounds of "
                          "the bounds and 1 probe runs (--fresh measures afresh)")
    assert [p.name for p in tmp_path.iterdir()] == [store.path.name]  # no temporary file left


def test_a_probes_pairs_of_another_python_or_jaxlib_are_not_its_own(tmp_path: Path) -> None:
    store = _store(tmp_path)
    store.add_pair("0.5.0", ("3.12", "0.5.0"), [1.0], [1.9], 2.0)
    assert store.pairs("0.5.0", ("3.13", "0.5.0")) == []
    assert store.pairs("0.5.1", ("3.12", "0.5.1")) == []  # never probed


def test_bounds_built_with_another_python_are_not_reused_and_it_says_which(tmp_path: Path) -> None:
    _store(tmp_path).add_round([1.0], [2.0], 1, 1, "ms", "lower")
    again = _store(tmp_path, bounds={**BOUNDS, "0.4.35": ("3.12", "0.4.35")})
    assert not again.reused
    assert again.rounds() == []
    assert "(jax 0.4.35 ran with python/jaxlib 3.11/0.4.35 then, 3.12/0.4.35 now)" in again.note


def test_samples_exactly_max_age_old_are_reused_and_older_are_not(tmp_path: Path) -> None:
    # The boundary: "older than 24 h" is strictly older.
    _store(tmp_path).add_round([1.0], [2.0], 1, 1, "ms", "lower")
    assert _store(tmp_path, clock=lambda: T0 + MAX_AGE_H * 3600).reused
    late = _store(tmp_path, clock=lambda: T0 + MAX_AGE_H * 3600 + 60)
    assert not late.reused
    assert "they are 24 h old; samples older than 24 h are measured again" in late.note


def test_another_kit_or_layout_is_not_reused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _store(tmp_path).add_round([1.0], [2.0], 1, 1, "ms", "lower")
    monkeypatch.setattr(metric_samples, "__version__", "9.9.9")
    assert "this is 9.9.9" in _store(tmp_path).note
    monkeypatch.setattr(metric_samples, "SCHEMA", 2)
    assert "another version of this file's layout" in _store(tmp_path).note


def test_fresh_neither_reads_nor_reuses(tmp_path: Path) -> None:
    _store(tmp_path).add_round([1.0], [2.0], 1, 1, "ms", "lower")
    fresh = _store(tmp_path, read=False)
    assert not fresh.reused
    assert fresh.rounds() == []
    assert fresh.note == "--fresh: the bounds and probes are measured afresh"


def test_kept_by_names_the_bisect_and_the_last_run_of_a_probe_or_the_bounds(tmp_path: Path) -> None:
    now = [T0]
    store = _store(tmp_path, clock=lambda: now[0])
    assert store.kept_by("0.5.0") == ("bisect-1", "2025-11-24T16:00:00Z")  # nothing yet: when it started
    now[0] += 60
    store.add_round([1.0], [2.0], 1, 1, "ms", "lower")
    now[0] += 60
    store.add_pair("0.5.0", ("3.12", "0.5.0"), [1.0], [1.9], 2.0)
    assert store.kept_by("0.5.0") == ("bisect-1", "2025-11-24T16:02:00Z")
    assert store.kept_by("0.5.1") == ("bisect-1", "2025-11-24T16:01:00Z")  # the bounds' last round


def test_a_folder_that_cannot_be_written_is_said_once_and_the_bisect_goes_on(tmp_path: Path) -> None:
    (tmp_path / "metric").write_text("a file where the folder should be")  # unwritable, even for root
    said: list[str] = []
    store = _store(tmp_path / "metric", log=said.append)
    store.add_round([1.0], [2.0], 1, 1, "ms", "lower")
    store.add_pair("0.5.0", ("3.12", "0.5.0"), [1.0], [1.9], 2.0)
    assert len(said) == 1
    assert "an interrupted bisect would measure them again" in said[0]
    assert store.rounds() == [([1.0], [2.0], 1.0, 1.0)]  # kept in memory all the same
