"""Catalogue entries compiled for a chip this machine lacks (``targets``): read, measured per target, audited.

Hermetic: no libtpu or CUDA plugin. The checks' own reading of the target compiler's HLO is tested on recorded
compiles (tests/data/hlo/jax-*-slogdet_1024.*, README there); runs are stand-ins that say what a run would.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from kit.records import RunOutcome, Status, Verdict
from kit.config import load_matrix
from kit.check_settings import ExplainedProgram, script_check
from kit.targets import Target, parse_target
from kit.errors import ConfigError, UsageError
from kit.known import command, measure as measure_module
from kit.known.catalogue import load_catalogue, read_entry
from kit.known.command import audit_main, known_main
from kit.known.listing import range_text
from kit.known.measure import measure
from kit.known.measured import Measurement, Presence, load_measurements, ranges, save_measurements
from kit.matrix.markdown import range_sentence
from kit.run.runner import RunRequest, target_env
from repro import known_target

ROOT = Path(__file__).resolve().parents[1]
HLO = ROOT / "tests" / "data" / "hlo"
TPU = "compiled for TPU v5e 2x2 (4 devices), not run"

AIMED = """title = "t"
kind = "sharding"
upstream = "https://github.com/jax-ml/jax/issues/1"
fix_note = "none yet"
shows_on = ["tpu"]
targets = ["tpu:v5e:2x2"]
measure_on = ["0.5.3", "0.12.0.1"]
"""
PLAIN = AIMED.replace('shows_on = ["tpu"]\ntargets = ["tpu:v5e:2x2"]\n', "")


def entry_file(folder: Path, name: str, text: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{name}.py").write_text("raise SystemExit(0)\n")
    path = folder / f"{name}.toml"
    path.write_text(text)
    return path


def test_an_entry_names_the_chips_its_check_is_compiled_for(tmp_path: Path) -> None:
    entry = read_entry(entry_file(tmp_path, "aimed", AIMED))
    assert [t.name for t in entry.targets] == ["tpu:v5e:2x2"]
    assert entry.to_json()["targets"] == ["tpu:v5e:2x2"]
    assert "targets" not in read_entry(entry_file(tmp_path, "plain", PLAIN)).to_json()


@pytest.mark.parametrize(("targets", "said"), [
    ('["tpu:v5e:3x3"]', "unknown --target 'tpu:v5e:3x3'"),
    ('["gpu:a100:4"]', "compiles for cuda, which shows_on leaves out"),
    ('["./mychip.toml"]', "is not a chip the kit names"),
    ("[]", "targets is empty"),
    ('"tpu:v5e:2x2"', "targets must be a list of strings"),
])
def test_a_bad_target_is_one_sentence_naming_the_file(tmp_path: Path, targets: str, said: str) -> None:
    path = entry_file(tmp_path, "aimed", AIMED.replace('["tpu:v5e:2x2"]', targets))
    with pytest.raises(ConfigError, match=said) as caught:
        read_entry(path)
    assert "aimed.toml" in str(caught.value)


def aimed(release: str, outcome: str) -> Measurement:
    return Measurement(release, "tpu", Presence(outcome), f"{TPU}: LU on 1024", f"{release}.json", target="tpu:v5e:2x2")


def test_a_target_is_ranged_apart_from_the_backends_and_every_line_says_compiled_not_run(tmp_path: Path) -> None:
    measured = [aimed("0.5.3", "present"), aimed("0.12.0.1", "present"),
                Measurement("0.6.0", "tpu", Presence.ABSENT, "", "r.json")]
    spans = ranges(measured)
    assert [(s.backend, s.target, s.open) for s in spans] == [("tpu", "", False), ("tpu", "tpu:v5e:2x2", True)]
    assert range_text(spans[1]) == f"tpu:v5e:2x2 ({TPU}): present in 0.5.3, 0.12.0.1: open on the newest measured"
    said = spans[1].to_json()
    assert (said["target"], said["compiled_not_run"]) == ("tpu:v5e:2x2", TPU)
    assert range_sentence(said) == f"tpu:v5e:2x2 ({TPU}): present in 0.5.3, 0.12.0.1 (open on the newest measured)"
    save_measurements(tmp_path, "one", measured, "2026-12-05")
    assert {m.target for m in load_measurements(tmp_path, "one")} == {"", "tpu:v5e:2x2"}


def test_the_listing_says_where_the_check_is_compiled(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "known"
    entry_file(folder, "aimed", AIMED)
    save_measurements(folder, "aimed", [aimed("0.5.3", "present")], "2026-12-05")
    assert known_main(load_matrix(str(ROOT / "matrix.toml")), [], print, folder) == 0
    out = capsys.readouterr().out
    assert "compiled for tpu:v5e:2x2, never run there (jax-kit audit RELEASE --target tpu:v5e:2x2)" in out
    assert f"tpu:v5e:2x2 ({TPU}): present in 0.5.3" in out


def test_measure_compiles_a_target_entry_for_each_chip_on_each_release(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "known"
    entry_file(folder, "aimed", AIMED)
    asked: list[tuple[str, str]] = []

    def run_entry(matrix: Any, entry: Any, log: Any, records: Path, *, version: str = "", target: Any = None,
                  **_: Any) -> Measurement:
        asked.append((version, target.name if target else "cpu"))
        return aimed(version, "present")

    monkeypatch.setattr(measure_module, "run_entry", run_entry)
    assert measure(load_matrix(str(ROOT / "matrix.toml")), load_catalogue(folder), folder, print) == 0
    assert asked == [("0.5.3", "tpu:v5e:2x2"), ("0.12.0.1", "tpu:v5e:2x2")]
    assert f"aimed on jax 0.5.3 for tpu:v5e:2x2 ({TPU}): present" in capsys.readouterr().out
    assert [s.target for s in ranges(load_measurements(folder, "aimed"))] == ["tpu:v5e:2x2"]


def test_verify_says_each_outcome_again_and_names_the_ones_that_no_longer_hold(
        monkeypatch: pytest.MonkeyPatch, catalogue: Path, capsys: pytest.CaptureFixture[str]) -> None:
    now = {"0.5.3": "present", "0.12.0.1": "absent"}  # the newest release no longer has it: a range broken

    def run_entry(matrix: Any, entry: Any, log: Any, records: Path, *, version: str = "", target: Any = None,
                  **_: Any) -> Measurement:
        return aimed(version, now[version])

    monkeypatch.setattr(measure_module, "run_entry", run_entry)
    broken = measure_module.verify(load_matrix(str(ROOT / "matrix.toml")), [read_entry(catalogue / "aimed.toml")],
                                   catalogue, print)
    out = capsys.readouterr().out
    # The chip is said as such ("on jax 0.5.3 (tpu:v5e:2x2 (...))"), not clipped ("(or tpu:v5e:2x2 ...").
    assert f"aimed on jax 0.5.3 (tpu:v5e:2x2 ({TPU})): measured present, now present" in out
    assert len(broken) == 1
    assert broken[0].startswith(f"aimed on jax 0.12.0.1 (tpu:v5e:2x2 ({TPU})): measured present, now absent")


@pytest.fixture()
def catalogue(tmp_path: Path) -> Path:
    folder = tmp_path / "known"
    entry_file(folder, "aimed", AIMED)
    entry_file(folder, "plain", PLAIN)
    save_measurements(folder, "aimed", [aimed("0.5.3", "present"), aimed("0.12.0.1", "present")], "2026-12-05")
    return folder


def matrix_in(tmp_path: Path) -> Any:
    matrix = load_matrix(str(ROOT / "matrix.toml"))
    return type(matrix)(**{**matrix.__dict__, "results_dir": tmp_path / "reports" / "results"})


def fake_target_runs(monkeypatch: pytest.MonkeyPatch, outcome: str) -> list[tuple[str, str]]:
    ran: list[tuple[str, str]] = []

    def run_entry(matrix: Any, entry: Any, log: Any, records: Path, *, version: str = "", existing: Any = None,
                  target: Any = None, **_: Any) -> Measurement:
        ran.append((entry.id, target.name if target else ""))
        return aimed(version, outcome)

    def audit_runs(matrix: Any, entries: Any, *_: Any, **__: Any) -> list[Measurement]:
        ran.extend((e.id, "") for e in entries)
        return [Measurement("0.12.0.1", "cpu", Presence.ABSENT, "", "") for _e in entries]

    monkeypatch.setattr(command, "run_entry", run_entry)
    monkeypatch.setattr(command, "audit_runs", audit_runs)
    return ran


def test_audit_target_runs_the_entries_compiled_for_it_says_what_it_left_and_exits_1(
        monkeypatch: pytest.MonkeyPatch, catalogue: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ran = fake_target_runs(monkeypatch, "present")
    assert audit_main(matrix_in(tmp_path), ["0.12.0.1", "--target", "tpu:v5e:2x2"], print, catalogue) == 1
    out = capsys.readouterr().out
    assert ran == [("aimed", "tpu:v5e:2x2")]
    assert "not run for tpu:v5e:2x2: 1 entries whose checks run on CPU host devices, not compiled for a chip " \
           "(plain); jax-kit audit 0.12.0.1 runs them" in out
    assert f"jax 0.12.0.1 ({TPU}, installed): 1 of 1 known problems present: aimed" in out
    report = json.loads((tmp_path / "reports" / "audit-jax-0.12.0.1-tpu-v5e-2x2.json").read_text())
    assert report["installation"]["compiled_not_run"] == TPU and report["present"] == ["aimed"]
    assert report["findings"][0]["compiled_not_run"] == TPU and report["findings"][0]["measured_range_says"] == "present"
    markdown = (tmp_path / "reports" / "audit-jax-0.12.0.1-tpu-v5e-2x2.md").read_text()
    assert f"| present, {TPU} (" in markdown and "none yet (open)" in markdown


def test_audit_target_with_the_problem_absent_exits_0(
        monkeypatch: pytest.MonkeyPatch, catalogue: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    fake_target_runs(monkeypatch, "absent")
    assert audit_main(matrix_in(tmp_path), ["0.12.0.1", "--target", "tpu:v5e:2x2"], print, catalogue) == 0
    assert "none of the 1 known problems found" in capsys.readouterr().out


def test_a_plain_audit_leaves_target_entries_and_says_how_to_run_them(
        monkeypatch: pytest.MonkeyPatch, catalogue: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ran = fake_target_runs(monkeypatch, "present")
    assert audit_main(matrix_in(tmp_path), ["0.12.0.1"], print, catalogue) == 0
    assert ran == [("plain", "")]
    assert "not run here: aimed is compiled only for tpu:v5e:2x2, never run (jax-kit audit 0.12.0.1 --target " \
           "tpu:v5e:2x2)" in capsys.readouterr().out


@pytest.mark.parametrize(("argv", "said"), [
    (["0.12.0.1", "--target", "gpu:a100:4"], "no catalogue entry is compiled for gpu:a100:4"),
    (["0.12.0.1", "--target", "tpu:v5e:9x9"], "unknown --target 'tpu:v5e:9x9'"),
    (["0.12.0.1", "--target", "./chip.toml"], "not a file"),
    (["0.12.0.1", "--target", "tpu:v5e:2x2", "--only", "plain"], "no catalogue entry of --only is compiled for"),
])
def test_audit_target_refuses_what_it_cannot_compile(catalogue: Path, argv: list[str], said: str) -> None:
    with pytest.raises(UsageError, match=said):
        audit_main(load_matrix(str(ROOT / "matrix.toml")), argv, print, catalogue)


def test_a_script_compiled_for_a_target_is_told_it_and_only_such_a_script() -> None:
    script = ROOT / "known" / "tpu-sharded-slogdet-lu.py"
    v5e = parse_target("tpu:v5e:2x2")
    told = target_env(script_check("x", script), v5e)
    assert json.loads(told[known_target.ENV])["name"] == "tpu:v5e:2x2" and list(told) == [known_target.ENV]
    assert target_env(script_check("x", script), None) == {}
    assert target_env(script_check("x", script, explain=ExplainedProgram()), v5e) == {}


def test_a_target_check_run_without_a_target_cannot_tell(monkeypatch: pytest.MonkeyPatch,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.delenv(known_target.ENV, raising=False)
    with pytest.raises(SystemExit) as stopped:
        known_target.begin()
    assert stopped.value.code == 125 and "run it with jax-kit audit --target" in capsys.readouterr().out


@pytest.mark.parametrize(("fixture", "calls", "gathers"), [
    ("jax-0.12.0.1-tpu-v5e-2x2", [("LuRealDecompositionBlock", (1024, 8, 8))], 1),
    ("jax-0.5.0-gpu-a100-4", [("cusolver_getrf_ffi", (1024, 8, 8))], 1),
    ("jax-0.5.3-gpu-a100-4", [("cusolver_getrf_ffi", (256, 8, 8))], 0),
])
def test_the_checks_read_each_devices_lu_batch_off_the_target_compilers_hlo(
        fixture: str, calls: list[tuple[str, tuple[int, ...]]], gathers: int) -> None:
    text = (HLO / f"{fixture}-slogdet_1024.after_optimizations.txt").read_text()
    assert known_target.linalg_calls(text, "lu") == calls
    assert known_target.collectives(text).count("all-gather") == gathers


@pytest.mark.parametrize(("fixture", "kinds", "calls"), [
    # EighTpu's first result is [batch, 4], after four all-gathers of the 256 a chip holds (issue 59 item 8).
    ("jax-0.12.0.1-tpu-v5e-2x2-eigh_1024", ("eigh",), [("eigh", "EighTpu", 1024)]),
    # solve on 4 A100s, 0.5.3: the getrf split, the two triangular solves after it on the gathered batch.
    ("jax-0.5.3-gpu-a100-4-solve_1024", ("lu", "triangular_solve"),
     [("lu", "cusolver_getrf_ffi", 256), ("triangular_solve", "__cublas$triangularSolve", 1024)]),
    ("jax-0.12.0.1-tpu-v5e-2x2-slogdet_1024", ("lu",), [("lu", "LuRealDecompositionBlock", 1024)]),
    ("jax-0.12.0.1-tpu-v5e-2x2-slogdet_1024", ("eigh",), []),
])
def test_the_checks_read_each_calls_batch_whatever_its_rank(fixture: str, kinds: tuple[str, ...],
                                                              calls: list[tuple[str, str, int]]) -> None:
    text = (HLO / f"{fixture}.after_optimizations.txt").read_text()
    assert known_target.calls_held(text, kinds) == calls
    assert known_target.said_calls(calls, 1024) == ", ".join(f"{t} on {n} of 1024" for _k, t, n in calls)


def test_the_shipped_target_entries_are_measured_for_their_chips() -> None:
    for entry in [e for e in load_catalogue(ROOT / "known") if e.targets]:
        measured = load_measurements(ROOT / "known", entry.id)
        assert {(m.target, m.release) for m in measured} == \
            {(t.name, r) for t in entry.targets for r in entry.measure_on}, entry.id


def test_a_target_runs_reason_carries_what_the_check_said_and_that_nothing_ran() -> None:
    from kit.known.runs import compiled_reason
    from kit.targets import parse_target

    target = parse_target("tpu:v5e:2x2")
    said = compiled_reason({"reason": "the script exited 1 (affected)",
                            "evidence": {"output_tail": ["x", f"{TPU}: jit: LU on 1024"]}}, target)
    assert said == f"the script exited 1 (affected): {TPU}: jit: LU on 1024"
    assert compiled_reason({"reason": "the script exited 0 (unaffected)"}, target) == \
        f"the script exited 0 (unaffected): {TPU}"


def test_after_a_target_check_fails_jax_is_probed_on_cpu_with_libtpu_told_it_is_not_on_a_tpu_vm(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from kit.run import runner, script_runs

    asked: list[dict[str, str]] = []

    class Health:
        ok, seconds = True, 0.1

        def sentence(self) -> str:
            return "JAX imports and runs here"

    def jax_runs(env: Any, extra_env: dict[str, str]) -> Health:
        asked.append(extra_env)
        return Health()

    class Env:
        def isolating_env(self) -> dict[str, str]:
            return {}

    monkeypatch.setattr(script_runs, "jax_runs", jax_runs)
    monkeypatch.setattr(script_runs, "release_bytecode_env", lambda env: {})
    fields = RunOutcome(Status.RAN, Verdict.AFFECTED)
    assert script_runs.unless_jax_failed(fields, Env(), print, known_target.PROBE_ENV) == fields  # type: ignore[arg-type]
    assert asked[-1]["JAX_PLATFORMS"] == "cpu" and asked[-1]["TPU_SKIP_MDS_QUERY"] == "1"


def test_the_target_becomes_text_in_one_place_for_every_kind_of_check(tmp_path: Path) -> None:
    # Issue 61: the catalogue's checks carried the target as JSON in Check.parameters (json.dumps of to_json, a
    # spelling of their own) beside the built-in repros' as_parameter; now the check holds none, the run request
    # holds the Target, and `kit.targets.target_parameter` writes it for the record and the repro's argv alike.
    from kit.config import parse_matrix
    from kit.known.catalogue import load_catalogue
    from kit.known.runs import entry_check, entry_request
    from kit.run.runner import parameters_for
    from kit.targets import target_parameter

    v5e = parse_target("tpu:v5e:2x2")
    entry = next(e for e in load_catalogue(ROOT / "known") if e.targets)
    matrix = parse_matrix({"release": [{"version": "0.12.0.1"}], "checks": {"scaling": {}}}, tmp_path / "matrix.toml")
    assert entry_check(entry).parameters == {}
    request = entry_request(entry, tmp_path, version="0.12.0.1", target=v5e)
    assert request.target == v5e
    script = parameters_for(matrix, request)
    builtin = parameters_for(matrix, RunRequest(check="scaling", version="0.12.0.1", target=v5e))
    assert script["target"] == builtin["target"] == target_parameter(v5e)["target"] == v5e.as_parameter
    assert Target.from_json(json.loads(str(script["target"]))) == v5e
