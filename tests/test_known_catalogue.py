"""The catalogue of known problems: entries read and checked, ranges read off measurements, the audit's answer."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from kit.config import load_matrix
from kit.errors import ConfigError, UsageError
from kit.known.command import audit_main, known_main
from kit.known import command  # noqa: F401 (monkeypatched)
from kit.known.catalogue import KINDS, load_catalogue, read_entry
from kit.known.listing import range_text
from kit.known.measured import Measurement, Presence, load_measurements, measured_path, ranges, save_measurements

ROOT = Path(__file__).resolve().parents[1]

GOOD = """title = "t"
kind = "wrong-values"
upstream = "https://github.com/jax-ml/jax/issues/1"
fix_commit = "0123456789"
measure_on = ["0.4.35", "0.6.0"]
"""


def entry_file(folder: Path, name: str = "one", text: str = GOOD, check: bool = True) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.toml"
    path.write_text(text)
    if check:
        (folder / f"{name}.py").write_text("raise SystemExit(0)\n")
    return path


def test_the_shipped_catalogue_reads_and_every_check_is_beside_its_entry() -> None:
    entries = load_catalogue(ROOT / "known")
    assert len(entries) >= 7
    assert {e.kind for e in entries} <= set(KINDS)
    assert all(e.check.is_file() and e.check.parent == ROOT / "known" for e in entries)
    assert all(e.fix_commit or e.fix_note for e in entries)


def test_every_shipped_entry_was_measured_by_the_kit() -> None:
    for entry in load_catalogue(ROOT / "known"):
        measured = load_measurements(ROOT / "known", entry.id)
        bisected = json.loads(measured_path(ROOT / "known", entry.id).read_text()).get("bisection")
        if bisected:  # found by release bisect: its boundaries' releases among the probes, the search finished
            assert bisected["done"] and set(entry.measure_on) <= {m.release for m in measured}, entry.id
        else:
            assert {m.release for m in measured} == set(entry.measure_on), entry.id
        assert all(m.record for m in measured if m.outcome is not Presence.UNTESTED), entry.id


@pytest.mark.parametrize(("change", "said"), [
    ('kind = "slow"', "kind 'slow' is not one of"),
    ('upstream = "https://example.com/x"', "is not a jax-ml/jax or openxla/xla address"),
    ('fix_commit = "HEAD"', "is not a commit hash"),
    ('measure_on = ["v0.6"]', "measure_on must list release numbers"),
    ('measure_on = []', "measure_on must list release numbers"),
    ('colour = "red"', "unknown key 'colour'"),
])
def test_a_bad_value_is_one_sentence_naming_the_file_and_key(tmp_path: Path, change: str, said: str) -> None:
    key = change.split(" = ")[0]
    lines = [line for line in GOOD.splitlines() if not line.startswith(key + " ")]
    path = entry_file(tmp_path, text="\n".join([*lines, change]) + "\n")
    with pytest.raises(ConfigError, match=said) as caught:
        read_entry(path)
    assert "one.toml" in str(caught.value)


def test_an_entry_without_its_check_or_any_fix_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="its check one.py is not beside it"):
        read_entry(entry_file(tmp_path, check=False))
    no_fix = GOOD.replace('fix_commit = "0123456789"\n', "")
    with pytest.raises(ConfigError, match="no fix_commit and no fix_note"):
        read_entry(entry_file(tmp_path, name="two", text=no_fix))


def test_a_catalogue_folder_holds_plain_files_of_its_own(tmp_path: Path) -> None:
    """A project's own known/ is handed to the kit: a FIFO would hang the read, a link out of the folder would
    read (and audit would run) a file the catalogue does not hold, a hidden name is no entry's id."""
    import os

    entry_file(tmp_path / "fifo", "one")
    os.mkfifo(tmp_path / "fifo" / "two.toml")
    with pytest.raises(ConfigError, match="two.toml in .* is not a plain file"):
        load_catalogue(tmp_path / "fifo")
    outside = entry_file(tmp_path / "elsewhere", "far")
    (tmp_path / "linked").mkdir()
    (tmp_path / "linked" / "far.toml").symlink_to(outside)
    (tmp_path / "linked" / "far.py").symlink_to(outside.with_suffix(".py"))
    with pytest.raises(ConfigError, match="far.toml in .* is a link out of the folder"):
        load_catalogue(tmp_path / "linked")
    inside = entry_file(tmp_path / "within", "real")  # a link within the folder is the folder's own file
    (tmp_path / "within" / "alias.toml").symlink_to(inside)
    (tmp_path / "within" / "alias.py").symlink_to(inside.with_suffix(".py"))
    assert [e.id for e in load_catalogue(tmp_path / "within")] == ["alias", "real"]
    entry_file(tmp_path / "hidden", ".secret")
    with pytest.raises(ConfigError, match="file name is its id"):
        load_catalogue(tmp_path / "hidden")


def m(release: str, outcome: str, backend: str = "cpu") -> Measurement:
    return Measurement(release, backend, Presence(outcome), "", f"{release}.json")


def test_the_range_is_read_off_the_outcomes_alone() -> None:
    (span,) = ranges([m("0.6.0", "absent"), m("0.4.13", "present"), m("0.4.30", "present"), m("0.4.35", "absent"),
                      m("0.4.18", "untested")])
    assert (span.present, span.absent, span.untested) == (("0.4.13", "0.4.30"), ("0.4.35", "0.6.0"), ("0.4.18",))
    assert (span.introduced_in, span.fixed_in, span.open) == (None, "0.4.35", False)
    assert span.holds("0.4.20") is True  # between two that hold it
    assert span.holds("0.4.31") is None  # between one that holds it and one that does not: untested
    assert span.holds("0.5.0") is False
    assert span.holds("0.12.0") is None  # past the newest measured
    assert range_text(span) == "cpu: present in 0.4.13, 0.4.30; absent in 0.4.35, 0.6.0: fixed in 0.4.35 " \
                               "(untested: 0.4.18)"


def test_a_problem_that_came_back_is_open_and_says_where_it_came_in() -> None:
    (span,) = ranges([m("0.4.35", "present"), m("0.5.3", "absent"), m("0.6.0", "present")])
    assert (span.introduced_in, span.fixed_in, span.open) == ("0.6.0", None, True)
    assert range_text(span).endswith("open on the newest measured")


def test_backends_are_ranged_apart() -> None:
    spans = ranges([m("0.6.0", "present", "tpu"), m("0.6.0", "absent", "cpu")])
    assert [(s.backend, s.open) for s in spans] == [("cpu", False), ("tpu", True)]


def test_measurements_round_trip_and_a_torn_file_reads_as_never_measured(tmp_path: Path) -> None:
    save_measurements(tmp_path, "one", [m("0.6.0", "absent"), m("0.4.35", "present")], "2026-12-05")
    assert [x.release for x in load_measurements(tmp_path, "one")] == ["0.4.35", "0.6.0"]
    saved = json.loads((tmp_path / "measured" / "one.json").read_text())
    assert saved["ranges"][0]["fixed_in"] == "0.6.0"
    (tmp_path / "measured" / "one.json").write_text('{"measurements": [{"release"')
    assert load_measurements(tmp_path, "one") == []


@pytest.mark.parametrize("text", ['[1, 2]', '{"measurements": {"release": "0.6.0"}}', '{"measurements": "0.6.0"}',
                                  '{"measurements": ["0.6.0"]}', '{"measurements": [{"release": "0.6.0"}]}'])
def test_a_measured_file_of_another_shape_reads_as_never_measured(tmp_path: Path, text: str) -> None:
    save_measurements(tmp_path, "one", [m("0.6.0", "absent")], "2026-12-05")
    (tmp_path / "measured" / "one.json").write_text(text)
    assert load_measurements(tmp_path, "one") == []


@pytest.fixture()
def catalogue(tmp_path: Path) -> Path:
    folder = tmp_path / "known"
    entry_file(folder, "one")
    entry_file(folder, "two", GOOD.replace('kind = "wrong-values"', 'kind = "sharding"'))
    save_measurements(folder, "one", [m("0.4.35", "present"), m("0.6.0", "absent")], "2026-12-05")
    return folder


def fake_runs(monkeypatch: pytest.MonkeyPatch, outcomes: dict[str, str]) -> list[str]:
    ran: list[str] = []

    def audit_runs(matrix: Any, entries: Any, log: Any, records: Path, *, version: str = "",
                   existing: Any = None, ready: Any = lambda: None) -> list[Measurement]:
        ready()
        ran.extend(entry.id for entry in entries)
        return [Measurement(version, "cpu", Presence(outcomes[entry.id]), "the script exited 1", "")
                for entry in entries]

    monkeypatch.setattr(command, "audit_runs", audit_runs)
    return ran


def test_audit_lists_what_is_present_with_its_safe_release_and_exits_1(
        monkeypatch: pytest.MonkeyPatch, catalogue: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    matrix = load_matrix(str(ROOT / "matrix.toml"))
    matrix = type(matrix)(**{**matrix.__dict__, "results_dir": tmp_path / "reports" / "results"})
    ran = fake_runs(monkeypatch, {"one": "present", "two": "untested"})
    assert audit_main(matrix, ["0.4.35"], print, catalogue) == 1
    out = capsys.readouterr().out
    assert "jax 0.4.35 (cpu, installed): 1 of 2 known problems present: one; untested: two" in out
    assert ran == ["one", "two"]
    report = json.loads((tmp_path / "reports" / "audit-jax-0.4.35-cpu.json").read_text())
    assert report["present"] == ["one"]
    assert report["findings"][0]["fixed_in"] == "0.6.0" and report["findings"][0]["measured_range_says"] == "present"
    assert "| jax &gt;= 0.6.0 |" in (tmp_path / "reports" / "audit-jax-0.4.35-cpu.md").read_text()


def test_audit_with_nothing_present_exits_0_and_flags_a_run_that_contradicts_the_range(
        monkeypatch: pytest.MonkeyPatch, catalogue: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    matrix = load_matrix(str(ROOT / "matrix.toml"))
    matrix = type(matrix)(**{**matrix.__dict__, "results_dir": tmp_path / "reports" / "results"})
    fake_runs(monkeypatch, {"one": "absent", "two": "absent"})
    assert audit_main(matrix, ["0.4.35"], print, catalogue) == 0
    assert "none of the 2 known problems found" in capsys.readouterr().out
    assert "differs from this run" in (tmp_path / "reports" / "audit-jax-0.4.35-cpu.md").read_text()


@pytest.mark.parametrize(("argv", "said"), [([], "audit needs a release or --python PATH"),
                                            (["0.4.35", "--python", "python3"], "one of them"),
                                            (["v0.4"], "not a plain JAX release number"),
                                            (["0.4.35", "--only", "nope"], "--only 'nope' is not a known problem")])
def test_audit_refuses_what_it_cannot_run(catalogue: Path, argv: list[str], said: str) -> None:
    with pytest.raises(UsageError, match=said):
        audit_main(load_matrix(str(ROOT / "matrix.toml")), argv, print, catalogue)


def test_audit_refuses_a_missing_interpreter_before_saying_it_runs_anything(
        catalogue: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # It printed "running 34 checks, ..." and then the error (noticed 2026-12-05).
    with pytest.raises(UsageError, match="does not exist"):
        audit_main(load_matrix(str(ROOT / "matrix.toml")), ["--python", str(tmp_path / "nope" / "python")], print,
                   catalogue)
    assert "running" not in capsys.readouterr().out


def test_known_json_has_one_object_per_entry_with_its_ranges(catalogue: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    assert known_main(load_matrix(str(ROOT / "matrix.toml")), ["--json"], print, catalogue) == 0
    listed = json.loads(capsys.readouterr().out)
    assert [e["id"] for e in listed] == ["one", "two"]
    assert listed[0]["fix_commit"] == "0123456789" and listed[0]["check"] == "one.py"
    assert listed[0]["ranges"] == [{"backend": "cpu", "present_in": ["0.4.35"], "absent_in": ["0.6.0"],
                                    "untested_in": [], "introduced_in": None, "fixed_in": "0.6.0", "open": False,
                                    "introduced_after": None, "introduced_unknown": [], "fixed_after": "0.4.35",
                                    "fixed_unknown": []}]
    assert listed[1]["ranges"] == []


def test_the_report_lists_the_catalogue_with_its_measured_ranges(catalogue: Path, tmp_path: Path) -> None:
    from kit.matrix.report import write_report

    written = write_report(tmp_path / "results", tmp_path / "out", plots=False, catalogue=catalogue)
    markdown = written.markdown.read_text()
    assert "| `one`: t | wrong-values | cpu: present in 0.4.35, absent in 0.6.0 (fixed in 0.6.0) | commit 0123456789 |" \
        in markdown
    assert "| `two`: t | sharding | never measured |" in markdown
    assert [e["id"] for e in json.loads(written.json.read_text())["catalogue"]] == ["one", "two"]
