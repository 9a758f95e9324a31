"""kit.bisect.probes: a ``--script`` probe runs through the runner, as the check block with that script would.

Scripts run for real with this interpreter standing in for each release's
python (``FAKE_JAX`` names the release); installs are faked as in
tests/test_bisect_driver.py. A fake ``flax`` package on the environment's
path stands in for an extra package installed for the release's era.
"""

from __future__ import annotations

import dataclasses
import textwrap
from pathlib import Path
from typing import Any

import pytest

from kit.bisect import driver
from kit.bisect.options import parse_options
from kit.bisect.probe_cache import subject_key
from kit.config import parse_matrix
from kit.errors import UsageError
from kit.install.environment import Prepared
from kit.run import runner
from tests.test_bisect_driver import MATRIX_TOML, World, install_fakes, report_json, run

# Each release's era gets its own flax (what --requires flax would install).
FLAX = {"0.4.34": "0.10.0", "0.4.35": "0.10.1", "0.4.36": "0.10.2", "0.4.37": "0.10.2", "0.4.38": "0.10.2",
        "0.5.0": "0.10.2", "0.5.1": "0.10.4", "0.5.2": "0.10.4", "0.5.3": "0.10.4", "0.6.0": "0.10.6"}


@pytest.fixture
def matrix(tmp_path: Path) -> Any:
    m = parse_matrix(MATRIX_TOML)
    return dataclasses.replace(m, results_dir=tmp_path / "reports" / "results", envs_dir=tmp_path / "envs")


def with_flax(monkeypatch: pytest.MonkeyPatch, world: World, tmp_path: Path) -> None:
    """Environments that required flax have a 'flax' package on their path; the others do not."""
    site = tmp_path / "site-with-flax"
    (site / "flax").mkdir(parents=True)
    (site / "flax" / "__init__.py").write_text("import os\n__version__ = " + repr(FLAX) + "[os.environ['FAKE_JAX']]\n")
    world.extra_pins = {version: {"flax": flax} for version, flax in FLAX.items()}
    prepare = runner.prepare

    def prepare_with_flax(matrix: Any, request: runner.RunRequest, log: Any, index: Any = None) -> Prepared:
        prepared = prepare(matrix, request, log, index)
        if prepared.environment is None or "flax" not in runner.check_for(matrix, request).requires:
            return dataclasses.replace(prepared, environment=prepared.environment and dataclasses.replace(
                prepared.environment, pins={k: v for k, v in prepared.environment.pins.items() if k != "flax"}))
        return dataclasses.replace(prepared, environment=dataclasses.replace(prepared.environment, pythonpath=(site,)))

    monkeypatch.setattr(runner, "prepare", prepare_with_flax)


IMPORTS_FLAX = textwrap.dedent("""\
    import flax
    print("flax", flax.__version__)
    """)


def _script(tmp_path: Path, body: str, name: str = "uses_flax.py") -> Path:
    path = tmp_path / name
    path.write_text(body)
    return path


def test_bounds_that_cannot_import_a_package_stop_naming_it_and_requires(
        matrix: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    world = World({})
    install_fakes(monkeypatch, world, tmp_path)
    with_flax(monkeypatch, world, tmp_path)
    script = _script(tmp_path, IMPORTS_FLAX)
    with pytest.raises(UsageError) as error:
        run(matrix, "--script", str(script), "--good", "0.5.0", "--bad", "0.4.34")
    assert str(error.value).startswith("the script could not import flax on jax ")
    assert "; pass --requires flax to install it for each release's era" in str(error.value)
    assert error.value.tip.endswith("--requires flax")
    assert sorted(world.runs) == ["0.4.34", "0.5.0"]  # the bounds only, each once


def test_with_requires_each_probe_line_names_the_version_its_release_got(
        matrix: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    world = World({})
    install_fakes(monkeypatch, world, tmp_path)
    with_flax(monkeypatch, world, tmp_path)
    body = IMPORTS_FLAX + "import os, sys\nsys.exit(0 if os.environ['FAKE_JAX'] >= '0.4.36' else 1)\n"
    code, log = run(matrix, "--script", str(_script(tmp_path, body)), "--requires", "flax",
                    "--good", "0.5.0", "--bad", "0.4.34")
    assert code == 0
    data = report_json(matrix)
    assert (data["last_same"], data["first_different"]) == ("0.4.35", "0.4.36")
    probes = [line for line in log if line.startswith("probe jax ")]
    assert probes and all(line.endswith(f" · flax {FLAX[line.split()[2].rstrip(':')]}") for line in probes)
    assert data["observations"]["0.4.35"]["extra_packages"] == {"flax": "0.10.1"}
    # The probes' records are kept, apart from the matrix's.
    kept = list((matrix.results_dir.parent / "bisect" / "script-records").glob("*-0.*-cpu-*.json"))
    assert len(kept) == len(world.runs) and not matrix.results_dir.exists()


# A user's repro of jax#25329 ("jit errors if an argument is named f", 0.4.36 only, here 0.4.37 to 0.5.1), in a
# script that fails otherwise on two releases: as real repros do, it meets other changes on the way.
KWARG_F = textwrap.dedent("""\
    import os
    jax = os.environ["FAKE_JAX"]
    if jax == "0.4.35":
        raise AttributeError("module 'jax.numpy' has no attribute 'unstack'")
    if jax == "0.5.0":
        raise ValueError("Incompatible shapes for broadcasting: (3,) and (4,)")
    if jax in ("0.4.37", "0.4.38", "0.5.1"):
        raise TypeError("result_paths() got multiple values for argument 'f'")
    print("ok")
    """)


def test_bad_if_finds_the_release_of_that_error_and_skips_the_others_naming_them(
        matrix: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    install_fakes(monkeypatch, World({}), tmp_path)
    script = _script(tmp_path, KWARG_F, "kwarg_f.py")
    argv = ["--script", str(script), "--good", "0.4.34", "--bad", "0.5.1", "--all"]
    run(matrix, *argv)
    plain = report_json(matrix)  # without --bad-if every failure is bad: 0.4.35's AttributeError is the "change"
    assert plain["transitions"][0]["after"] == "0.4.35"
    run(matrix, *argv, "--bad-if", "multiple values for argument 'f'")
    data = report_json(matrix, name="*0.5.1-cpu-all")
    assert [(t["before"], t["after"]) for t in data["transitions"]] == [("0.4.36", "0.4.37")]
    assert data["outcomes"]["0.4.35"] == data["outcomes"]["0.5.0"] == "skip"
    assert data["observations"]["0.5.0"]["exception"] == "ValueError: Incompatible shapes for broadcasting: (3,) and (4,)"
    out = capsys.readouterr().out
    assert "0.4.35 (AttributeError: module 'jax.numpy' has no attribute 'unstack')" in out
    assert "| skip (failed otherwise: ValueError) |" in out


def test_bad_if_narrows_a_bisect_to_the_right_release(matrix: Any, tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    install_fakes(monkeypatch, World({}), tmp_path)
    script = _script(tmp_path, KWARG_F, "kwarg_f.py")
    run(matrix, "--script", str(script), "--good", "0.4.34", "--bad", "0.5.1", "--bad-if", "argument 'f'")
    data = report_json(matrix)
    assert (data["last_same"], data["first_different"], data["ambiguous"]) == ("0.4.36", "0.4.37", [])


def test_a_script_and_the_same_file_as_a_check_give_equal_records(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    script = _script(tmp_path, IMPORTS_FLAX + "raise TypeError(\"got multiple values for argument 'f'\")\n",
                     "kwarg_f.py")
    table = {"script": str(script), "host_devices": 2, "requires": ["flax"], "bad_if": "argument 'f'"}
    matrix = parse_matrix({**MATRIX_TOML, "checks": {**MATRIX_TOML["checks"], "kwarg": table}},
                          tmp_path / "matrix.toml")
    matrix = dataclasses.replace(matrix, results_dir=tmp_path / "results", envs_dir=tmp_path / "envs")
    world = World({})
    install_fakes(monkeypatch, world, tmp_path)
    with_flax(monkeypatch, world, tmp_path)
    options = parse_options(matrix, ["--script", str(script), "--host-devices", "2", "--requires", "flax",
                                     "--bad-if", "argument 'f'", "--good", "0.4.34", "--bad", "0.4.36"])
    as_script = runner.RunRequest(check=options.subject, version="0.4.36", script=options.script_check)
    as_check = runner.RunRequest(check="kwarg", version="0.4.36")
    made = [runner.run_check(matrix, request, lambda _m: None, driver.open_index(matrix),
                             runner.prepare(matrix, request, lambda _m: None))[0] for request in (as_script, as_check)]
    volatile = {"check", "created", "duration_s", "reproduce", "identity"}
    assert {k: v for k, v in made[0].items() if k not in volatile} == {k: v for k, v in made[1].items()
                                                                       if k not in volatile}
    # Their identities differ only in the check's name: the same script, settings, packages and machine.
    identities = [{**record["identity"], "subject": {**record["identity"]["subject"], "check": None}} for record in made]
    assert identities[0] == identities[1]
    assert made[0]["verdict"] == "affected" and made[0]["environment"]["packages"] == {"flax": "0.10.2"}
    assert made[0]["environment"]["device_count"] == 2 and made[0]["parameters"]["bad_if"] == "argument 'f'"
    # A --script's probes are keyed by what decides its outcome: its content and settings, not its path.
    moved = _script(tmp_path, script.read_text(), "elsewhere.py")
    same = parse_options(matrix, ["--script", str(moved), "--host-devices", "2", "--requires", "flax",
                                  "--bad-if", "argument 'f'", "--good", "0.4.34", "--bad", "0.4.36"])
    other = parse_options(matrix, ["--script", str(moved), "--host-devices", "2", "--requires", "flax",
                                   "--good", "0.4.34", "--bad", "0.4.36"])
    assert subject_key(matrix, options) == subject_key(matrix, same) != subject_key(matrix, other)


@pytest.mark.parametrize(("argv", "message"), [
    (["--check", "scaling", "--requires", "flax"], "--requires applies to --script"),
    (["--check", "scaling", "--bad-if", "x"], "--bad-if applies to --script"),
    (["--script", "SCRIPT", "--bad-if", "f(x"], "--bad-if 'f(x' is not a regular expression"),
    (["--script", "SCRIPT", "--requires", "jax"], "--requires 'jax' is part of the release under test"),
    (["--script", "SCRIPT", "--host-devices", "0"], "argument --host-devices: must be a positive whole number"),
])
def test_a_script_s_settings_are_checked_where_they_enter(matrix: Any, tmp_path: Path, argv: list[str],
                                                         message: str) -> None:
    script = _script(tmp_path, "print('ok')\n")
    argv = [str(script) if arg == "SCRIPT" else arg for arg in argv]
    with pytest.raises(UsageError, match=message.replace("(", r"\(")):
        parse_options(matrix, [*argv, "--good", "0.4.34", "--bad", "0.4.36"])


def test_an_install_that_failed_is_tried_again_by_the_next_bisect(matrix: Any, tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    world = World({})
    install_fakes(monkeypatch, world, tmp_path)
    prepare, failing = runner.prepare, {"0.4.35"}

    def install_fails(matrix: Any, request: runner.RunRequest, log: Any, index: Any = None) -> Prepared:
        prepared = prepare(matrix, request, log, index)
        if request.version in failing:  # resolved, but the build of a dependency failed
            return dataclasses.replace(prepared, environment=None, problem="install failed: a build needed the network")
        return prepared

    monkeypatch.setattr(runner, "prepare", install_fails)
    script = _script(tmp_path, "import os, sys\nsys.exit(0 if os.environ['FAKE_JAX'] >= '0.4.36' else 1)\n")
    argv = ["--script", str(script), "--good", "0.4.36", "--bad", "0.4.34", "--all"]
    run(matrix, *argv)
    assert report_json(matrix)["outcomes"]["0.4.35"] == "skip"
    failing.clear()
    run(matrix, *argv)
    data = report_json(matrix)
    assert data["outcomes"]["0.4.35"] == "bad" and "0.4.35" in data["probed_now"]
    assert "0.4.34" in data["answered_by_cache"]  # what did run is known
