"""Hostile files where the kit reads results back: one reason each, never a traceback.

Real files in a results folder (and in the probe cache, the locks and the plot
manifests): an integer of 5000 digits, arrays nested 100,000 deep, bytes that
are not UTF-8, NaN samples, shapes no kit writes. `nox -s report`, `nox -s
matrix` and `nox -s bisect` go on, listing each unusable file with its reason;
every JSON they write stays strict. docs/faults.md, "Values and records".
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kit import __version__, cli, exit_codes, records
from kit.bisect.probe.cache import ProbeCache
from kit.install import lockfile
from kit.matrix.model import build_report
from kit.matrix.markdown import render_markdown
from kit.install.key import InstallKey
from repro.contract import strict_json
from tests.fake_index import refused_url
from tests.observations import observed

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "records"


def _strict(text: str) -> Any:
    """JSON as a strict parser reads it: NaN and Infinity are errors."""
    return json.loads(text, parse_constant=lambda name: pytest.fail(f"{name} in strict JSON"))


def _record(jax: str, verdict: str, **fields: Any) -> dict[str, Any]:
    """A record of this machine, as the matrix below would run it."""
    record = {"schema": records.SCHEMA, "kit_version": __version__, "check": "scaling",
              "requested": {"jax": jax, "backend": "cpu", "preset": None}, "status": "ran", "verdict": verdict,
              "reason": "measured", "environment": {"backend": "cpu", "device_count": 4},
              "install": {"python": "3.11", "requirements": [f"jax[cpu]=={jax}", "scipy"]},
              "parameters": {"devices": [1, 2, 4], "batch": 4096, "processes": 1}, "evidence": {"summary": {}},
              "host": {"name": "here", "machine_id": records.machine_id()}, "created": "2026-01-01T00:00:00Z"}
    record.update(fields)
    return record


HOSTILE = {
    # name: (bytes, the reason the listing gives)
    "huge-integer.json": (('{"schema": 1, "duration_s": ' + "9" * 5000 + "}").encode(),
                          "not usable JSON: Exceeds the limit (4300"),  # "(4300 digits)" since 3.11, "(4300)" before
    "nested-100000.json": (b"[" * 100_000 + b"]" * 100_000, "nested too deeply to read"),
    "nested-200.json": (json.dumps({"schema": 1, "evidence": {"x": json.loads("[" * 200 + "]" * 200)}}).encode(),
                        "nested more than 64 levels deep (the kit reads up to 64)"),
    "not-utf8.json": (b"\xff\xfe{\x00", "unreadable: not UTF-8 text (byte 0)"),
    "a-string.json": (b'"hello"', "not a record: top level is a JSON str"),
    "empty.json": (b"   \n", "empty file"),
    "bad-samples.json": (json.dumps(_record("0.6.0", "unaffected", metrics={"t": {"samples": ["fast"]}})).encode(),
                         "metric 't': samples are not a list of numbers"),
    "bad-fields.json": (json.dumps(_record("0.6.0", "unaffected", reason=["a", "list"], duration_s="1 s")).encode(),
                        "field 'reason' is not text; field 'duration_s' is not a number"),
}


def _hostile_folder(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for name, (content, _reason) in HOSTILE.items():
        (folder / name).write_bytes(content)
    (folder / "a-folder.json").mkdir()  # a folder with a record's name: not a file, not listed
    return folder


def test_every_hostile_file_is_listed_with_one_reason(tmp_path: Path) -> None:
    folder = _hostile_folder(tmp_path / "results")
    records.write_record(_record("0.6.0", "unaffected"), folder)
    loaded = records.load_records(folder)
    assert len(loaded.records) == 1
    reasons = {unusable.path.name: unusable.reason for unusable in loaded.unusable}
    assert set(reasons) == set(HOSTILE)
    for name, (_content, reason) in HOSTILE.items():
        assert reason in reasons[name], name
        assert "\n" not in reasons[name]
        assert len(reasons[name]) < 300


MATRIX_TOML = ('[kit]\nresults_dir = "reports/results"\nenvs_dir = "envs"\n[install]\n'
               f'index_url = "{refused_url()}"\n[[release]]\nversion = "0.6.0"\n'
               '[checks.scaling]\ndevices = [1, 2, 4]\nbatch = 4096\n')


def test_nan_samples_are_kept_as_null_and_matrix_json_stays_strict(tmp_path: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    results = tmp_path / "reports" / "results"
    _hostile_folder(results)
    nan_record = json.dumps(_record("0.6.0", "unaffected", metrics={"t": {"unit": "ms", "samples": [1.0, 3.0]}}))
    (results / "nan-samples.json").write_text(nan_record.replace("[1.0, 3.0]", "[1.0, NaN, 3.0, Infinity]"))
    toml = tmp_path / "matrix.toml"
    toml.write_text(MATRIX_TOML)
    lines: list[str] = []
    code = cli.main(["report", "--no-plots"], log=lines.append, matrix_path=str(toml))
    assert code == exit_codes.EXIT_OK
    skipped = [line for line in lines if line.startswith("skipped ")]
    assert len(skipped) == len(HOSTILE)
    data = _strict((tmp_path / "reports" / "matrix.json").read_text())
    [series] = data["metrics"]
    assert series["metric"] == "t"
    assert [point["n"] for point in series["points"]] == [2]  # the two finite samples
    assert "nan-samples.json" not in "\n".join(skipped)


def test_a_sweep_goes_on_past_hostile_records(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from tests.fake_repro import install_fake_release

    toml = tmp_path / "matrix.toml"
    toml.write_text(MATRIX_TOML)
    matrix = cli.load_matrix(toml)
    _hostile_folder(matrix.results_dir)
    install_fake_release(matrix.envs_dir, matrix, "0.6.0")
    for _ in range(2):
        assert cli.main(["matrix"], log=lambda line: None, matrix_path=str(toml)) == exit_codes.EXIT_OK
    assert "1 cell: 0 ran, 1 current (skipped)" in capsys.readouterr().out


def test_bisect_takes_its_bounds_from_the_records_past_hostile_ones(tmp_path: Path,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    toml = tmp_path / "matrix.toml"
    toml.write_text(MATRIX_TOML)
    results = _hostile_folder(tmp_path / "reports" / "results")
    records.write_record(_record("0.4.35", "affected"), results)
    records.write_record(_record("0.6.0", "unaffected"), results)
    lines: list[str] = []
    code = cli.main(["bisect", "--check", "scaling"], log=lines.append, matrix_path=str(toml))
    # The records gave the bounds; then the (refused) index is the one sentence, exit 4, as anywhere.
    assert any("searching between bad 0.4.35 and good 0.6.0" in line for line in lines)
    assert code == exit_codes.EXIT_NETWORK
    err = capsys.readouterr().err
    assert "Traceback" not in err
    assert err.startswith("ERROR: ")


def _identity() -> records.Identity:
    return records.run_identity(subject={"check": "scaling"}, jax="0.6.0", backend="cpu", python="3.11",
                                packages={"jaxlib": "0.6.0"}, requirements=[], exclude_newer=None,
                                hardware={"cpu": "x"}, variables={})


@pytest.mark.parametrize("content", [content for name, (content, _reason) in HOSTILE.items()
                                     if not name.startswith("bad-")] + [
    b'{"schema": 2, "identity": KEY, "observation": {"status": 5, "verdict": null, "reason": ""}}',
    b'{"schema": 2, "identity": KEY, "observation": ["ran"]}',
    b'{"schema": 2, "identity": KEY, "observation": {"status": "ran"}}',
    b'{"schema": 2, "identity": KEY, "observation": {"status": "ran", "verdict": null, "reason": "", "runs": 3}}',
    b'{"schema": 2, "identity": {"schema": 1}, "observation": {"status": "ran", "verdict": null, "reason": ""}}',
    b'{"schema": 1, "key": KEY, "observation": {"status": "ran", "verdict": null, "reason": ""}}',
    # Schema 3 keeps the observation in parts: a part that is no object, a part's field of the wrong shape,
    # a part without its required fields, a part nested in itself.
    b'{"schema": 3, "identity": KEY, "observation": {"found": 5}}',
    b'{"schema": 3, "identity": KEY, "observation": {"found": {"status": "ran", "verdict": null, "reason": ""},'
    b' "cost": {"seconds": "12"}}}',
    b'{"schema": 3, "identity": KEY, "observation": {"found": {"status": "ran"}, "came_from": {}}}',
    b'{"schema": 3, "identity": KEY, "observation": {"found": {"status": "ran", "verdict": null, "reason": ""},'
    b' "installed": {"installed": {"pins": []}, "pins": "numpy"}}}',
    b'{"schema": 4, "identity": KEY, "observation": {"found": {"status": "ran", "verdict": null, "reason": ""}}}',
])
def test_a_hostile_probe_cache_file_is_named_once_and_probed_again(tmp_path: Path, content: bytes) -> None:
    key = _identity()
    path = ProbeCache(tmp_path).path(key)
    path.parent.mkdir(parents=True)
    path.write_bytes(content.replace(b"KEY", json.dumps(key.to_json()).encode()))
    lines: list[str] = []
    cache = ProbeCache(tmp_path, log=lines.append)
    assert cache.get(key, 60) is None
    assert cache.get(key, 60) is None
    assert len(lines) == 1
    assert lines[0].startswith(f"skipped the probe cache file {path}: ")
    assert lines[0].endswith("(the release is probed again)")
    cache.put(key, observed("ran", "unaffected", "fine", samples=[1.0]))  # the next probe's answer replaces it
    assert cache.get(key, 60) == observed("ran", "unaffected", "fine", samples=[1.0])
    _strict(path.read_text())


def test_a_hostile_lock_is_resolved_again(tmp_path: Path) -> None:
    matrix = cli.load_matrix(Path(__file__).resolve().parents[2] / "matrix.toml")
    settings_ = lockfile.install_settings(matrix, matrix.release("0.6.0"), InstallKey("cpu"))
    path = lockfile.lock_path(tmp_path, settings_)
    path.parent.mkdir(parents=True)
    for content, _reason in HOSTILE.values():
        path.write_bytes(content)
        assert lockfile.read_lock(tmp_path, settings_) is None


# Any JSON value in any field of a real record: the record is unusable (one reason) or the report is built.
_VALUES = st.recursive(st.none() | st.booleans() | st.integers(-10**30, 10**30) | st.floats() | st.text(max_size=5),
                       lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner,
                                                                                   max_size=3), max_leaves=8)
_BASE = [json.loads(path.read_text()) for path in sorted((FIXTURES / "cpu-laptop-sweep").glob("*.json"))]


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found = [prefix] if prefix else []
    if isinstance(value, dict):
        for key, item in value.items():
            found += _paths(item, prefix + (key,))
    elif isinstance(value, list):
        for index, item in enumerate(value[:3]):
            found += _paths(item, prefix + (index,))
    return found


@settings(deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_any_value_anywhere_in_a_record_is_unusable_or_reported(data: Any) -> None:
    which = data.draw(st.integers(0, len(_BASE) - 1))
    record = json.loads(json.dumps(_BASE[which]))
    for key in ("metrics", "slurm"):
        record.setdefault(key, {"t": {"samples": [1.0]}} if key == "metrics" else {})
    for key in ("timings", "scaling", "structure", "cases", "verdict_from"):
        record["evidence"].setdefault(key, [])
    where = data.draw(st.sampled_from(_paths(record)))
    target = record
    for step in where[:-1]:
        target = target[step]
    target[where[-1]] = data.draw(_VALUES)
    try:
        parsed = records.parse_record(json.dumps(record))
    except records.RecordError as error:
        assert "\n" not in str(error)
        return
    others = [records.LoadedRecord(Path(f"{i}.json"), r) for i, r in enumerate(_BASE) if i != which]
    report = build_report([*others, records.LoadedRecord(Path("x.json"), parsed)],
                          configured={"scaling": {"devices": [1, 2, 4]}, "correctness": {"matrix_size": 20}})
    render_markdown(report)
    _strict(strict_json(report.to_json(), default=str))
