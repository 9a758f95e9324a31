"""kit.records.store: atomic unique writes, records kept elsewhere when the disk is full, tolerant loading."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kit.file_names import is_name_part
from kit import records
from kit.records import store
from kit.records import SCHEMA, load_records, write_record

from tests.record_samples import FIXTURES, make_record  # noqa: F401  (FIXTURES: used below)


def test_write_then_load_round_trips(tmp_path: Path) -> None:
    path = write_record(make_record(), tmp_path / "results" / "nested")
    assert path.parent == tmp_path / "results" / "nested"
    assert path.name.startswith("scaling-0.4.35-cpu-abc123abc123-")
    loaded = load_records(tmp_path / "results")
    assert loaded.unusable == []
    assert loaded.records == [make_record()]


def test_a_record_of_an_existing_interpreter_is_named_as_one(tmp_path: Path) -> None:
    existing = {"environment": "existing", "interpreter": "/v/bin/python"}
    assert store.record_filename(make_record(install=existing)).startswith("scaling-0.4.35-existing-cpu-abc123abc123-")
    named = store.record_filename(make_record(install={**existing, "name": "cluster-module"}))
    assert named.startswith("scaling-0.4.35-cluster_module-cpu-")
    assert store.record_filename(make_record()).startswith("scaling-0.4.35-cpu-abc123abc123-")


def test_names_never_collide_even_for_identical_records(tmp_path: Path) -> None:
    paths = {write_record(make_record(), tmp_path) for _ in range(50)}
    assert len(paths) == 50
    assert len(list(tmp_path.iterdir())) == 50


def test_existing_record_is_never_overwritten(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    first = write_record(make_record(verdict="affected"), tmp_path)
    names = iter([first.name, "second.json"])
    monkeypatch.setattr(store, "record_filename", lambda record, now=None: next(names))
    second = write_record(make_record(verdict="unaffected"), tmp_path)
    assert second.name == "second.json"
    assert json.loads(first.read_text())["verdict"] == "affected"


def test_failed_write_leaves_no_temp_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def broken_fsync(fd: int) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(os, "fsync", broken_fsync)
    with pytest.raises(OSError, match="disk full"):
        write_record(make_record(), tmp_path)
    assert list(tmp_path.iterdir()) == []


def test_unserialisable_record_writes_nothing(tmp_path: Path) -> None:
    with pytest.raises(TypeError):
        write_record(make_record(duration_s=object()), tmp_path)
    assert list(tmp_path.iterdir()) == []


def test_a_record_is_written_as_strict_json(tmp_path: Path) -> None:
    path = write_record(make_record(duration_s=float("nan"), metrics={"t": {"samples": [float("inf"), 1.0]}}),
                        tmp_path)
    strict = json.loads(path.read_text(), parse_constant=lambda name: pytest.fail(f"{name} in a record"))
    assert strict["duration_s"] is None
    assert strict["metrics"]["t"]["samples"] == [None, 1.0]


def test_temp_files_of_unfinished_writes_are_ignored(tmp_path: Path) -> None:
    (tmp_path / ".tmp-abandoned.json").write_text("{")
    assert load_records(tmp_path).unusable == []


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        ('{"schema": 1, "check": "scal', "not valid JSON"),
        ("", "empty file"),
        ("[1, 2]", "top level is a JSON list"),
        (json.dumps(make_record(schema=2)), "newer kit (schema 2"),
        (json.dumps(make_record(schema="one")), "no usable 'schema'"),
        (json.dumps(make_record(schema=0)), "no migration"),
        (json.dumps(make_record(requested={})), "requested.jax"),
        (json.dumps(make_record(verdict="maybe")), "unknown verdict"),
        (json.dumps(make_record(status="exploded")), "unknown status"),
        (json.dumps(make_record(evidence={"summary": [1]})), "evidence.summary"),
    ],
)
def test_unusable_file_is_a_problem_not_a_crash(tmp_path: Path, content: str, reason: str) -> None:
    (tmp_path / "bad.json").write_text(content)
    write_record(make_record(), tmp_path)
    loaded = load_records(tmp_path)
    assert len(loaded.records) == 1
    [problem] = loaded.unusable
    assert problem.path == tmp_path / "bad.json"
    assert reason in problem.reason


def test_migration_hook_upgrades_old_schema(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    old = make_record(schema=0)
    del old["kit_version"]
    (tmp_path / "old.json").write_text(json.dumps(old))
    monkeypatch.setitem(records.MIGRATIONS, 0, lambda r: {**r, "kit_version": "0.0.1"})
    [record] = load_records(tmp_path).records
    assert record["schema"] == SCHEMA
    assert record["kit_version"] == "0.0.1"


def test_fixture_set_reports_corrupt_and_future_records() -> None:
    loaded = load_records(FIXTURES)
    reasons = {p.path.name: p.reason for p in loaded.unusable}
    assert set(reasons) == {"corrupt-truncated.json", "newer-schema-from-future-kit.json"}
    assert "not valid JSON" in reasons["corrupt-truncated.json"]
    assert len(loaded.records) == 17


def test_missing_results_folder_is_empty() -> None:
    loaded = load_records(Path("/nonexistent/results"))
    assert loaded.records == []
    assert loaded.unusable == []


@settings(max_examples=30, deadline=None)
@given(
    check=st.text(min_size=1, max_size=12),
    jax=st.text(min_size=1, max_size=12),
    backend=st.text(min_size=1, max_size=8),
)
def test_any_names_give_safe_distinct_files(tmp_path_factory: pytest.TempPathFactory, check: str, jax: str,
                                            backend: str) -> None:
    folder = tmp_path_factory.mktemp("results")
    record = make_record(check=check, requested={"jax": jax, "backend": backend})
    first, second = write_record(record, folder), write_record(record, folder)
    assert first != second
    assert first.parent == second.parent == folder
    assert "/" not in first.name
    assert not first.name.startswith(".")
    # Read back only where its names could name files (`kit.file_names`); otherwise listed as unusable.
    loaded = load_records(folder)
    readable = is_name_part(check) and is_name_part(backend)
    assert [r["check"] for r in loaded.records] == ([check, check] if readable else [])
    assert len(loaded.unusable) == (0 if readable else 2)


def test_records_and_reports_get_the_mode_the_umask_gives(tmp_path: Path) -> None:
    old = os.umask(0o022)
    try:
        record = records.write_record(make_record(), tmp_path / "results")
        store.atomic_write_text(tmp_path / "matrix.md", "# matrix\n")
    finally:
        os.umask(old)
    assert stat.S_IMODE(record.stat().st_mode) == 0o644
    assert stat.S_IMODE((tmp_path / "matrix.md").stat().st_mode) == 0o644


def _disk_full(*args: Any, **kwargs: Any) -> Any:
    raise OSError(28, "No space left on device")


def test_a_full_results_folder_keeps_the_record_elsewhere_and_says_where(tmp_path: Path, monkeypatch) -> None:
    from kit.errors import StorageError

    monkeypatch.setattr(store.tempfile, "tempdir", str(tmp_path / "tmp"))
    monkeypatch.setattr(store, "write_record", _disk_full)
    record = make_record(status="ran", verdict="affected")
    with pytest.raises(StorageError) as caught:
        records.save_record(record, tmp_path / "results")
    kept = next((tmp_path / "tmp").glob(f"{records.UNSAVED_DIR_NAME}-*/*.json"))
    assert json.loads(kept.read_text()) == record
    assert caught.value.message == (f"could not write the record into {tmp_path / 'results'} "
                                    f"(No space left on device); it was kept at {kept}")
    assert caught.value.tip.endswith(f"then mv {kept} {tmp_path / 'results'}/")
    assert caught.value.exit_code == 1


def test_when_no_folder_takes_the_record_it_is_printed(tmp_path: Path, monkeypatch, capsys) -> None:
    from kit.errors import StorageError

    monkeypatch.setattr(store, "write_record", _disk_full)
    monkeypatch.setattr(store, "atomic_write_text", _disk_full)
    with pytest.raises(StorageError, match="it is printed above"):
        records.save_record(make_record(status="ran"), tmp_path / "results")
    assert json.loads(capsys.readouterr().err)["status"] == "ran"
