"""Values that pass one check and break the next: each refused where it enters, in one true sentence.

docs/faults.md, "Values and records", lists each case with what the kit says.
"""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from kit import cli, exit_codes, records
from kit.config import load_matrix
from tests.fake_index import refused_url

REPO = Path(__file__).resolve().parents[2]
MATRIX_TOML = str(REPO / "matrix.toml")


def _main(argv: list[str], capsys: pytest.CaptureFixture[str], matrix_path: str = MATRIX_TOML) -> tuple[int, str]:
    capsys.readouterr()
    code = cli.main(argv, log=lambda line: None, matrix_path=matrix_path)
    return code, capsys.readouterr().err


def _nothing_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: object, **kwargs: object) -> None:
        pytest.fail("resolved, installed or ran for a value that should have been refused")

    monkeypatch.setattr("kit.run.runner.prepare", refuse)
    monkeypatch.setattr("kit.install.environment.prepare", refuse)
    monkeypatch.setattr("kit.records.store.write_record", refuse)
    monkeypatch.setattr("kit.bisect.driver.open_index", refuse)


# -- parameters that pass the checks and then blame the release


def test_devices_that_cannot_split_the_positive_control_are_refused_before_install(
        capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    _nothing_runs(monkeypatch)
    code, err = _main(["run", "scaling", "0.6.0", "--devices", "1,3", "--batch", "4095"], capsys)
    assert code == exit_codes.EXIT_USAGE
    assert err.splitlines()[0] == ("ERROR: --matrix-size 32 does not split evenly over 3 devices: the positive "
                                   "control splits each matrix's rows over the devices, so each device count must "
                                   "divide the matrix size")
    assert err.splitlines()[1].startswith("TIP: ")
    assert len(err.splitlines()) == 2


def test_the_repro_refuses_them_too_and_writes_nothing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from repro import scaling

    out = tmp_path / "result.json"
    assert scaling.main(["--out", str(out), "--devices", "1,3", "--batch", "4095"]) == 2
    assert capsys.readouterr().err.startswith("error: --matrix-size 32 does not split evenly over 3 devices")
    assert not out.exists()


def _setup(ones: Any) -> Any:
    """Just enough of jax for the positive control to reach its JAX calls."""
    numpy = SimpleNamespace(ones=ones)
    sharding = SimpleNamespace(PartitionSpec=lambda *axes: axes, NamedSharding=lambda mesh, spec: spec)
    jax = SimpleNamespace(numpy=numpy, sharding=sharding)
    compat = SimpleNamespace(batch_mesh=lambda devices: "mesh")
    return SimpleNamespace(jax=jax, compat=compat, processes=1, target=None)  # runs here, no target


def test_a_repro_mistake_crashes_the_run_instead_of_judging_the_release() -> None:
    from repro import scaling

    parameters = {"matrix_size": 32, "batch": 4095, "dtype": "float32"}
    with pytest.raises(ValueError, match="--matrix-size 32 does not split evenly over 3 devices"):
        scaling._positive_control(_setup(lambda *a: pytest.fail("called JAX")), [0, 1, 2], parameters)
    with pytest.raises(KeyError):  # the repro's own bug, outside the JAX calls: a crash, not a verdict
        scaling._positive_control(_setup(lambda *a: pytest.fail("called JAX")), [0, 1], {"matrix_size": 32})


def test_what_jax_itself_raises_is_a_fact_about_the_release() -> None:
    from repro import scaling

    def jax_says_no(*args: object) -> None:
        raise RuntimeError("UNIMPLEMENTED: sharded LU\nmore detail")

    control = scaling._positive_control(_setup(jax_says_no), [0, 1], {"matrix_size": 32, "batch": 8, "dtype": "f"})
    assert control == {"devices": 2, "sharded_axis": "matrix rows", "ok": False,
                       "why_not": "RuntimeError: UNIMPLEMENTED: sharded LU"}


# -- the weak items


def test_factor_inf_is_refused(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    _nothing_runs(monkeypatch)
    for factor in ("inf", "nan", "1", "-2", "fast"):
        code, err = _main(["bisect", "--check", "scaling", "--metric", "m", "--good", "0.6.0", "--bad", "0.4.35",
                           "--factor", factor], capsys)
        assert code == exit_codes.EXIT_USAGE
        assert err.splitlines()[0] == (f"ERROR: argument --factor: must be a finite number above 1, e.g. 1.5 "
                                       f"(a 50% slowdown), got '{factor}'")


@pytest.mark.parametrize("command", [["run", "scaling", "0.6.0"], ["matrix"], ["bisect", "--check", "scaling"]])
def test_a_timeout_is_a_whole_number_of_seconds_however_written(command: list[str], capsys: pytest.CaptureFixture[str],
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    _nothing_runs(monkeypatch)
    for text, sentence in (("1.5", "must be a whole number of seconds from 1 to 1000000000, got '1.5'"),
                           ("0", "must be a whole number of seconds from 1 to 1000000000, got '0'"),
                           ("1e10", "must be a whole number of seconds from 1 to 1000000000, got '1e10'")):
        code, err = _main([*command, "--timeout", text], capsys)
        assert code == exit_codes.EXIT_USAGE
        assert err.splitlines()[0] == f"ERROR: argument --timeout: {sentence}"


def test_a_large_whole_timeout_runs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from tests.fake_repro import install_fake_release

    toml = tmp_path / "matrix.toml"
    toml.write_text('[kit]\nresults_dir = "results"\nenvs_dir = "envs"\n[install]\n'
                    f'index_url = "{refused_url()}"\n[[release]]\nversion = "0.6.0"\n'
                    '[checks.scaling]\ntimeout_s = 1e9\n')
    matrix = load_matrix(toml)
    assert matrix.check("scaling").timeout_s == 10**9
    install_fake_release(matrix.envs_dir, matrix, "0.6.0")
    code, _err = _main(["run", "scaling", "0.6.0", "--timeout", "1e9"], capsys, str(toml))
    assert code == exit_codes.EXIT_OK
    [record] = records.load_records(matrix.results_dir).records
    assert record["status"] == "ran"


def _matrix_with(tmp_path: Path, release: str = "0.6.0", check: str = "") -> str:
    toml = tmp_path / "matrix.toml"
    (tmp_path / "checks").mkdir(exist_ok=True)
    (tmp_path / "checks" / "mine.py").write_text("import sys; sys.exit(0)\n")
    extra = f'[checks.{json.dumps(check)}]\nscript = "checks/mine.py"\n' if check else ""
    toml.write_text(f'[[release]]\nversion = {json.dumps(release)}\n[checks.scaling]\n{extra}', encoding="utf-8")
    return str(toml)


def test_a_release_that_is_not_a_plain_number_is_refused_at_load(tmp_path: Path,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    code, err = _main(["report"], capsys, _matrix_with(tmp_path, release=" v0.5.1+evil "))
    assert code == exit_codes.EXIT_USAGE
    assert err.splitlines() == ["ERROR: release[0].version ' v0.5.1+evil ' is not a plain JAX release number",
                                "TIP: write it like 0.4.35: digits and dots, nothing else"]


@pytest.mark.parametrize("argv", [["run", "scaling", " v0.5.1+evil "], ["plan", "0.5.1+evil"],
                                  ["bisect", "--check", "scaling", "--good", "v0.6.0", "--bad", "0.4.35"],
                                  ["matrix", "--only", "0.6.0rc1"]])
def test_a_version_on_any_command_line_is_a_plain_number(argv: list[str], capsys: pytest.CaptureFixture[str],
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    _nothing_runs(monkeypatch)
    code, err = _main(argv, capsys)
    assert code == exit_codes.EXIT_USAGE
    assert "is not a plain JAX release number" in err.splitlines()[0]
    assert len(err.splitlines()) == 2


def test_a_check_name_that_is_not_ascii_is_refused_at_load(tmp_path: Path,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    code, err = _main(["report"], capsys, _matrix_with(tmp_path, check="é"))
    assert code == exit_codes.EXIT_USAGE
    assert err.splitlines() == [
        "ERROR: check name 'é' has characters a session or record file name cannot hold",
        "TIP: use ASCII letters, digits, - and _ (starting with a letter or digit)"]
    assert _main(["report", "--no-plots"], capsys, _matrix_with(tmp_path, check="my-check_2"))[0] == 0
