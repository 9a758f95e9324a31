"""The command line: summaries users paste into issues, exit codes, one-line errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kit import cli, commands, exit_codes, user_paths
from kit.config import parse_matrix
from kit.errors import UsageError
from kit.install import plan as install_plan
from kit.install.key import InstallKey
from kit.install.plan import InstallPlan, Resolution
from kit.install.release import ResolvedRelease
from tests.fake_index import refused_url, serve_index

RAN = {
    "check": "scaling",
    "requested": {"jax": "0.4.35", "backend": "cpu"},
    "status": "ran",
    "verdict": "affected",
    "reason": "Every device factorises the whole batch.",
    "environment": {"backend": "cpu", "device_count": 4, "device_kind": "cpu", "jax": "0.4.35",
                    "jaxlib": "0.4.35", "numpy": "2.1.3", "python": "3.13.0"},
    "evidence": {"summary": {"all_gathers": 1, "lu_batch_per_device": 4096, "efficiency_4": 0.0812}},
    "reproduce": "nox -s scaling-0.4.35",
}

NOT_INSTALLABLE = {
    "check": "scaling",
    "requested": {"jax": "0.4.16", "backend": "cpu"},
    "status": "not-installable",
    "verdict": None,
    "reason": "jax 0.4.16 is not installable here: https://pypi.org/simple has no jaxlib 0.4.16 wheels",
    "install": {"neighbours": ["0.4.13", "0.4.18"], "how_to_supply": "Put a jaxlib 0.4.16 wheel in DIR."},
    "reproduce": "nox -s scaling-0.4.16",
}


def test_summary_of_a_run() -> None:
    assert commands.summary(RAN, Path("reports/results/x.json")).splitlines() == [
        "== scaling · jax 0.4.35 · cpu: AFFECTED",
        "   Every device factorises the whole batch.",
        "   ran on cpu × 4 (cpu), jax 0.4.35, jaxlib 0.4.35, numpy 2.1.3, python 3.13.0",
        "   key figures: all_gathers=1, lu_batch_per_device=4096, efficiency_4=0.0812",
        "   record: reports/results/x.json",
        "   reproduce: nox -s scaling-0.4.35",
    ]


def test_summary_of_a_release_that_cannot_be_installed_says_what_to_do() -> None:
    lines = commands.summary(NOT_INSTALLABLE, Path("r.json")).splitlines()
    assert lines[0] == "== scaling · jax 0.4.16 · cpu: NOT INSTALLABLE HERE"
    assert "installable neighbours: 0.4.13, 0.4.18 (e.g. nox -s scaling-0.4.13)" in lines[2]
    assert lines[3] == "   to supply wheels: Put a jaxlib 0.4.16 wheel in DIR."


@pytest.mark.parametrize(
    ("record", "fail_on_affected", "code"),
    [
        (RAN, False, exit_codes.EXIT_OK),
        (RAN, True, exit_codes.EXIT_FAILED),
        ({**RAN, "verdict": "unaffected"}, True, exit_codes.EXIT_OK),
        ({**RAN, "status": "crashed"}, False, exit_codes.EXIT_FAILED),
        ({**RAN, "status": "timed-out"}, False, exit_codes.EXIT_FAILED),
        (NOT_INSTALLABLE, True, exit_codes.EXIT_NOT_INSTALLABLE),
    ],
)
def test_exit_codes(record: dict, fail_on_affected: bool, code: int) -> None:
    assert commands.exit_code(record, fail_on_affected) == code


def test_check_parameters_parse_into_matrix_shapes() -> None:
    parser = commands.run_parser("scaling")
    args = parser.parse_args(["--devices", "2", "--batch", "8192", "--dtype", "float64", "--backend", "cuda"])
    assert (args.devices, args.batch, args.dtype, args.backend) == ([2], 8192, "float64", "cuda")
    # Parsed once, in the normal form the repro and the records use: device counts sorted, once each.
    assert parser.parse_args(["--devices", "4,2,1,2"]).devices == [1, 2, 4]


def test_unknown_option_is_a_usage_error_not_a_usage_dump() -> None:
    with pytest.raises(UsageError, match="unrecognized arguments: --devcies"):
        commands.run_parser("scaling").parse_args(["--devcies", "4"])


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["frobnicate"], "ERROR: unknown command 'frobnicate'"),
        (["run", "scaling"], "ERROR: run needs a check and a version"),
        (["run", "speed", "0.6.0"], "ERROR: unknown check 'speed'"),
        (["run", "scaling", "latest"],
         "ERROR: 'latest' is neither a JAX release number nor an [[environment]] in matrix.toml"),
        (["run", "scaling", "0.6.0", "--python", "/no/such/python", "--refresh"],
         "ERROR: --refresh shapes an install, and an existing interpreter is used as it is"),
        (["run", "scaling", "0.6.0", "--batch", "-3"], "ERROR: --batch -3 is not valid: it must be a positive integer"),
        (["run", "scaling", "0.6.0", "--preset", "huge"], "ERROR: scaling has no preset 'huge'"),
    ],
)
def test_bad_input_prints_one_error_and_a_tip(argv: list[str], message: str, capsys, monkeypatch) -> None:
    monkeypatch.chdir(Path(__file__).resolve().parent.parent)
    # The run itself must never start for bad input.
    monkeypatch.setattr(commands, "run_check", lambda *a, **k: pytest.fail("ran despite bad input"))
    monkeypatch.setattr("kit.run.runner.prepare", lambda *a, **k: pytest.fail("prepared despite bad input"))
    assert cli.main(argv, log=lambda m: None) == exit_codes.EXIT_USAGE
    err = capsys.readouterr().err.splitlines()
    assert err[0] == message or err[0].startswith(message)
    assert err[1].startswith("TIP: ")


def test_cuda_without_a_gpu_stops_before_downloading_anything(capsys, monkeypatch) -> None:
    monkeypatch.chdir(Path(__file__).resolve().parent.parent)
    monkeypatch.setattr("kit.install.environment.shutil.which", lambda name: None)
    monkeypatch.delenv("KIT_ALLOW_NO_GPU", raising=False)
    monkeypatch.setattr("kit.install.release.plan_install", lambda *a, **k: pytest.fail("planned without a GPU"))
    assert cli.main(["run", "scaling", "0.6.0", "--backend", "cuda"], log=lambda m: None) == exit_codes.EXIT_USAGE
    err = capsys.readouterr().err
    assert "no NVIDIA GPU is visible here" in err
    assert "TIP: check the install plan without downloading: nox -s plan -- 0.6.0 --backend cuda" in err


MATRIX_TOML = str(Path(__file__).parent.parent / "matrix.toml")


@pytest.mark.parametrize(
    "argv, message",
    [
        (["scaling", "0.6.0", "--devices", "3"], "ERROR: --batch 4096 does not split evenly over 3 devices"),
        (["scaling", "0.6.0", "--timeout", "-1"], "ERROR: argument --timeout: must be a whole number of seconds from 1 to"),
        (["scaling", "0.6.0", "--timeout", "0"], "ERROR: argument --timeout: must be a whole number of seconds from 1 to"),
        (["scaling", "0.6.0", "--repeats", "-1"], "ERROR: --repeats -1 is not valid: it must be a non-negative integer"),
        (["correctness", "0.6.0", "--batches", "0"], "ERROR: --batches 0 is not valid"),
    ],
)
def test_bad_parameters_stop_before_anything_is_resolved_or_written(argv: list[str], message: str, capsys,
                                                                     monkeypatch) -> None:
    from kit.run import runner

    def no_install(*args: object, **kwargs: object) -> None:
        pytest.fail("resolved or installed a release for parameters the repro would refuse")

    monkeypatch.setattr(runner, "prepare", no_install)
    monkeypatch.setattr(runner.records, "write_record", no_install)
    assert cli.main(["run", *argv], matrix_path=MATRIX_TOML) == exit_codes.EXIT_USAGE
    err = capsys.readouterr().err.splitlines()
    assert err[0].startswith(message)
    assert err[1].startswith("TIP: ")
    assert len(err) == 2


def test_a_single_value_for_a_list_parameter_is_a_one_element_list(monkeypatch) -> None:
    from kit.run import runner

    seen: list[dict] = []

    def stop(matrix: object, request: runner.RunRequest, log: object, *args: object, **kwargs: object) -> None:
        seen.append(runner.parameters_for(matrix, request))  # type: ignore[arg-type]
        raise UsageError("stop here", "")

    monkeypatch.setattr(commands, "run_check", stop)
    cli.main(["run", "correctness", "0.6.0", "--batches", "200000000"], matrix_path=MATRIX_TOML)
    assert seen
    assert seen[0]["batches"] == [200000000]


def test_report_with_a_bad_flag_is_one_error_and_a_tip(capsys) -> None:
    assert cli.main(["report", "--bogus"], matrix_path=MATRIX_TOML) == exit_codes.EXIT_USAGE
    assert capsys.readouterr().err.splitlines() == [
        "ERROR: unrecognized arguments: --bogus", "TIP: see docs/install.md (options), or `nox -l`"]


def matrix_file(tmp_path: Path, index_url: str) -> str:
    path = tmp_path / "matrix.toml"
    path.write_text(f'[kit]\nresults_dir = "{tmp_path}/results"\nenvs_dir = "{tmp_path}/envs"\n'
                    f'[install]\nindex_url = "{index_url}"\n'
                    '[[release]]\nversion = "0.6.0"\n[checks.scaling]\ndevices = [1, 2]\n', encoding="utf-8")
    return str(path)


def test_an_unreachable_index_and_no_environment_is_a_network_error_and_no_record(tmp_path: Path, capsys,
                                                                                  monkeypatch) -> None:
    # The probe answers before uv is asked (uv would retry the index for many seconds per Python): said by what
    # runs, not by the clock, which a loaded machine stretches (74 s once).
    monkeypatch.setattr(install_plan, "_resolve", lambda *a, **k: pytest.fail("uv was asked to resolve"))
    code = cli.main(["run", "scaling", "0.6.0"], log=lambda m: None, matrix_path=matrix_file(tmp_path, refused_url()))
    assert code == exit_codes.EXIT_NETWORK
    err = capsys.readouterr().err.splitlines()
    assert err[0].startswith("ERROR: jax 0.6.0 needs the package index to resolve its install, and ")
    assert err[1].startswith("TIP: ")
    assert not (tmp_path / "results").exists()  # nothing the matrix could read as "not installable"


def test_a_release_the_index_does_not_have_is_bad_input_and_no_record(tmp_path: Path, capsys) -> None:
    with serve_index() as served:
        code = cli.main(["run", "scaling", "9.9.9"], log=lambda m: None, matrix_path=matrix_file(tmp_path, served.url))
    assert code == exit_codes.EXIT_USAGE
    assert capsys.readouterr().err.splitlines()[0] == (
        f"ERROR: jax 9.9.9 is not a JAX release on {served.url}; newest is 0.6.0")
    assert not (tmp_path / "results").exists()


@pytest.mark.parametrize("argv", [["-s", "scaling-9.9.9"], ["--session=scaling-9.9.9"],
                                  ["-s", "correctness-0.6.0", "scaling-9.9.9", "--", "--devices", "1"]])
def test_a_session_for_a_release_not_in_the_matrix_points_at_matrix_toml(argv: list[str]) -> None:
    matrix = parse_matrix({"release": [{"version": "0.6.0"}], "checks": {"scaling": {}, "correctness": {}}})
    assert cli.unknown_session_hints(matrix, argv) == [
        "kit: there is no session scaling-9.9.9: jax 9.9.9 is not a [[release]] in matrix.toml. Add one there "
        "(README: Adding a release or a check), or run it once without the matrix: python -m kit run scaling 9.9.9"]
    assert cli.unknown_session_hints(matrix, ["-s", "scaling-0.6.0", "tests", "matrix"]) == []


def test_plan_says_it_answered_from_the_lock(tmp_path: Path, capsys) -> None:
    from kit.install import lockfile
    from kit.config import load_matrix
    from kit.install.plan import InstallPlan, Resolution

    path = matrix_file(tmp_path, refused_url())  # the index is down: only the lock can answer
    matrix = load_matrix(path)
    plan = InstallPlan(jax="0.6.0", backend="cpu", requirements=("jax[cpu]==0.6.0", "scipy"),
                       exclude_newer="2025-05-01T00:00:18Z", index_url=matrix.install.index_url, pythons=("3.13",))
    lockfile.write_lock(matrix.envs_dir, lockfile.install_settings(matrix, matrix.release("0.6.0"), InstallKey("cpu")), plan,
                        Resolution("3.13", ok=True, versions={"jax": "0.6.0", "jaxlib": "0.6.0"}))
    assert cli.main(["plan", "0.6.0"], log=lambda m: None, matrix_path=path) == exit_codes.EXIT_OK
    out = capsys.readouterr().out.splitlines()
    assert out[1].startswith("  as locked when its environment was built (")
    assert "    jaxlib==0.6.0" in out
    assert cli.main(["plan", "0.6.0", "--refresh"], log=lambda m: None, matrix_path=path) == exit_codes.EXIT_NETWORK


def test_plan_says_which_of_the_callers_uv_settings_it_left_out(tmp_path: Path, capsys, monkeypatch) -> None:
    plan = InstallPlan(jax="0.6.0", backend="cpu", requirements=("jax[cpu]==0.6.0", "scipy"),
                       exclude_newer="2025-05-01T00:00:18Z", index_url="https://example.invalid/simple", pythons=("3.13",))
    resolved = ResolvedRelease(plan, Resolution("3.13", ok=True, versions={"jax": "0.6.0", "scipy": "1.15.2"}))
    monkeypatch.setattr(commands, "resolve_release", lambda *a, **k: resolved)  # as resolved just now, not from a lock
    monkeypatch.setenv("UV_RESOLUTION", "lowest")
    assert cli.main(["plan", "0.6.0"], log=lambda m: None, matrix_path=matrix_file(tmp_path, refused_url())) == (
        exit_codes.EXIT_OK)
    notes = [line for line in capsys.readouterr().out.splitlines() if line.startswith("  note: UV_")]
    assert notes == ["  note: UV_RESOLUTION is set here: the kit's uv runs without it, so a release installs as "
                     "its plan says (where wheels come from: index_url and find_links under [install] in "
                     "matrix.toml, or -- --find-links; a version held: --pin)"]


# --------------------------------------------------------------------------
# Is my installation affected? `run CHECK --python PATH` and `run CHECK ENVIRONMENT`


def _environment_matrix(tmp_path: Path, python: Path) -> str:
    path = tmp_path / "matrix.toml"
    path.write_text(f'[kit]\nresults_dir = "{tmp_path / "results"}"\n[install]\nindex_url = "{refused_url()}"\n'
                    '[[release]]\nversion = "0.4.35"\n[checks.scaling]\ndevices = [1, 2]\n[checks.correctness]\n'
                    f'[[environment]]\nname = "mine"\npython = "{python}"\n', encoding="utf-8")
    return str(path)


def _asked(monkeypatch: pytest.MonkeyPatch) -> list:
    asked: list = []
    monkeypatch.setattr(commands, "run_check", lambda matrix, request, *a, **k: asked.append(request) or (RAN, Path("r")))
    return asked


@pytest.mark.parametrize(("argv", "version", "python", "name"), [
    (["run", "scaling", "--python", "{python}"], "", "{python}", None),
    (["run", "scaling", "0.4.35", "--python", "{python}"], "0.4.35", "{python}", None),  # nox -s scaling-0.4.35 -- --python
    (["run", "scaling", "mine"], "", "{python}", "mine"),  # nox -s scaling-mine
])
def test_run_reads_a_release_an_interpreter_or_an_environment(argv: list[str], version: str, python: str,
                                                              name: str | None, tmp_path: Path, monkeypatch) -> None:
    venv_python = tmp_path / "venv" / "bin" / "python"
    asked = _asked(monkeypatch)
    argv = [arg.format(python=venv_python) for arg in argv]
    assert cli.main(argv, log=lambda m: None, matrix_path=_environment_matrix(tmp_path, venv_python)) == 0
    [request] = asked
    assert request.version == version
    assert request.existing is not None
    assert (request.existing.python, request.existing.name, request.existing.backend) == (venv_python, name, None)


@pytest.mark.parametrize(("argv", "message"), [
    (["run", "scaling", "mine", "--python", "/usr/bin/python3"], "ERROR: environment mine already names its interpreter"),
    (["run", "scaling", "theirs"], "ERROR: 'theirs' is neither a JAX release number nor an [[environment]]"),
    (["run", "scaling", "mine", "--find-links", "{folder}"], "ERROR: --find-links shapes an install"),
    (["run", "scaling", "--python", "{missing}"], "ERROR: {missing} does not exist"),
    (["run", "scaling", "--python", "{folder}"], "ERROR: {folder} is a folder, not a Python interpreter"),
    (["run", "scaling", "--python", "/bin/true"], "ERROR: /bin/true did not answer as a Python interpreter"),
])
def test_an_interpreter_that_is_not_one_is_one_error_and_no_record(argv: list[str], message: str, tmp_path: Path,
                                                                   capsys, monkeypatch) -> None:
    monkeypatch.setattr("kit.run.runner.PackageIndex", lambda *a: pytest.fail("the index was asked"))
    places = {"missing": tmp_path / "nope" / "python", "folder": tmp_path}
    argv = [arg.format(**places) for arg in argv]
    code = cli.main(argv, log=lambda m: None, matrix_path=_environment_matrix(tmp_path, tmp_path / "mine" / "python"))
    assert code == exit_codes.EXIT_USAGE
    err = capsys.readouterr().err.splitlines()
    assert err[0].startswith(message.format(**places))
    assert err[1].startswith("TIP: ")
    assert len(err) == 2
    assert not (tmp_path / "results").exists()


def test_python_may_be_a_name_on_path(tmp_path: Path, monkeypatch) -> None:
    (tmp_path / "python3.42").write_text("#!/bin/sh\n")
    (tmp_path / "python3.42").chmod(0o755)
    monkeypatch.setenv("PATH", str(tmp_path))
    assert user_paths.interpreter_path("python3.42") == tmp_path / "python3.42"
    monkeypatch.chdir(tmp_path)
    assert user_paths.interpreter_path("venv/bin/python") == tmp_path / "venv" / "bin" / "python"  # absolute, links kept


def test_a_session_for_an_environment_not_in_the_matrix_points_at_matrix_toml(tmp_path: Path) -> None:
    matrix = parse_matrix({"release": [{"version": "0.6.0"}], "checks": {"scaling": {}},
                           "environment": [{"name": "mine", "python": "/v/bin/python"}]}, tmp_path / "matrix.toml")
    assert cli.unknown_session_hints(matrix, ["-s", "scaling-mine"]) == []
    assert cli.unknown_session_hints(matrix, ["-s", "scaling-theirs"]) == [
        "kit: there is no session scaling-theirs: theirs is not an [[environment]] in matrix.toml. Add one there "
        "(docs/tour.md: Is my installation affected?), or run it once with python -m kit run scaling --python PATH"]


EXISTING_INSTALL = {"environment": "existing", "interpreter": "/v/bin/python", "name": None, "python": "3.12.1",
                    "packages": {"jax": "0.4.35", "jaxlib": "0.4.35"}, "packages_fingerprint": "0123456789abcdef"}


def test_summary_of_an_existing_interpreter_says_so() -> None:
    record = {**RAN, "install": EXISTING_INSTALL, "reproduce": "python -m kit run scaling --python /v/bin/python"}
    lines = commands.summary(record, Path("r.json")).splitlines()
    assert lines[0] == "== scaling · jax 0.4.35 · cpu · existing interpreter: AFFECTED"
    assert lines[-3] == ("   environment: existing, /v/bin/python as it is (Python 3.12.1, 2 packages, "
                         "fingerprint 0123456789abcdef)")
    named = commands.summary({**record, "install": {**EXISTING_INSTALL, "name": "mine"}}, Path("r.json"))
    assert named.splitlines()[0] == "== scaling · jax 0.4.35 · cpu · environment mine: AFFECTED"


def test_summary_of_an_interpreter_without_jax_or_scipy_is_its_sentence() -> None:
    no_jax = {"check": "scaling", "requested": {"jax": "", "backend": "unknown"}, "status": "not-installable",
              "reason": "/v/bin/python has no jax or jaxlib installed ...", "install": EXISTING_INSTALL,
              "environment": {"python": "3.12.1"}}
    lines = commands.summary(no_jax, Path("r.json")).splitlines()
    assert lines[:2] == ["== scaling · jax (none) · unknown · existing interpreter: NO JAX RELEASE THERE",
                         "   /v/bin/python has no jax or jaxlib installed ..."]
    assert commands.exit_code(no_jax, False) == exit_codes.EXIT_NOT_INSTALLABLE
    no_scipy = {**no_jax, "requested": {"jax": "0.4.35", "backend": "cpu"}, "status": "ran", "verdict": "inconclusive",
                "reason": "/v/bin/python has no scipy installed ..."}
    lines = commands.summary(no_scipy, Path("r.json")).splitlines()
    assert lines[:3] == ["== scaling · jax 0.4.35 · cpu · existing interpreter: INCONCLUSIVE",
                         "   /v/bin/python has no scipy installed ...",
                         "   environment: existing, /v/bin/python as it is (Python 3.12.1, 2 packages, "
                         "fingerprint 0123456789abcdef)"]
    assert commands.exit_code(no_scipy, False) == exit_codes.EXIT_OK


def test_a_script_that_reports_no_devices_is_not_said_to_run_on_none() -> None:
    from kit import cli

    lines = commands._ran_lines({"environment": {"backend": "cpu", "jax": "0.6.0", "jaxlib": "0.6.0", "python": "3.12"}})
    assert lines[0].startswith("   ran on cpu, jax 0.6.0")
    assert "None" not in lines[0].split(", numpy")[0]


def test_an_interrupted_kit_command_exits_130_through_nox(monkeypatch: pytest.MonkeyPatch) -> None:
    """Ctrl-C in `nox -s matrix`: the sweep keeps its records and returns 130; nox must not turn it into 1."""
    import importlib.util
    from types import SimpleNamespace

    spec = importlib.util.spec_from_file_location("kit_noxfile", Path(__file__).resolve().parent.parent / "noxfile.py")
    assert spec is not None
    assert spec.loader is not None
    noxfile = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(noxfile)
    monkeypatch.setattr(noxfile.cli, "main", lambda *args, **kwargs: 130)
    with pytest.raises(SystemExit) as stopped:
        noxfile._run(SimpleNamespace(name="matrix", posargs=[], log=print), ["matrix"])
    assert stopped.value.code == 130


def test_ctrl_c_in_a_kit_command_is_one_sentence_and_130_not_a_traceback(monkeypatch: pytest.MonkeyPatch,
                                                                          capsys) -> None:
    # `jax-kit scaling 0.6.0` or `python -m kit run ...`, Ctrl-C while the check runs: it was Python's traceback.
    def interrupted(*args: object, **kwargs: object) -> int:
        raise KeyboardInterrupt

    monkeypatch.setattr(cli, "_main", interrupted)
    assert cli.main(["run", "scaling", "0.6.0"]) == exit_codes.EXIT_INTERRUPTED
    assert capsys.readouterr().err.splitlines() == [cli.INTERRUPTED + "; the same command again starts it over"]
    # A bisect skips its cached probes when given again; an audit runs every check again (it said "carries on").
    assert cli.main(["bisect", "--check", "scaling"]) == exit_codes.EXIT_INTERRUPTED
    assert capsys.readouterr().err.endswith("the same command again carries on from there\n")
    assert cli.main(["audit", "0.4.35"]) == exit_codes.EXIT_INTERRUPTED
    assert capsys.readouterr().err.endswith("the same command again starts it over\n")
    assert cli.interrupted_line(["--config", "kit.toml", "matrix"]).endswith("carries on from there")


# --target: a chip compiled for, not run (kit/targets.py names them, repro/scaling_target.py compiles for them).
TARGET_RAN = {
    **RAN, "requested": {"jax": "0.12.0.1", "backend": "tpu",
                         "target": {"name": "tpu:v5e:2x2", "title": "TPU v5e 2x2 (4 devices)"}},
    "reason": "jit forward: Every device factorises the whole batch. The verdict is from the target compiler's HLO: "
              "compiled for TPU v5e 2x2 (4 devices), not run.",
    "environment": {**RAN["environment"], "backend": "tpu", "host_backend": "cpu", "device_kind": "TPU v5 lite",
                    "compiled_for": "TPU v5e 2x2 (4 devices)", "jax": "0.12.0.1"},
}


def test_summary_of_a_target_run_says_it_was_compiled_for_the_target_and_not_run() -> None:
    lines = commands.summary(TARGET_RAN, Path("r.json")).splitlines()
    assert lines[0] == "== scaling · jax 0.12.0.1 · tpu · compiled for TPU v5e 2x2 (4 devices), not run: AFFECTED"
    assert lines[1].endswith("compiled for TPU v5e 2x2 (4 devices), not run.")
    assert lines[2].startswith("   compiled for TPU v5e 2x2 (4 devices) (TPU v5 lite), not run; compiled on cpu, "
                               "jax 0.12.0.1")


def test_a_target_name_becomes_the_target_it_names_and_installs_its_compiler() -> None:
    overrides: dict = {"target": "TPU:v5e:2x2", "devices": [1, 2]}
    target = commands.target_from_flags("scaling", overrides, None)
    assert target is not None and target.install_extra == "tpu" and target.topology == "v5e:2x2"
    assert overrides == {"devices": [1, 2]}  # the request carries the Target, not the parameters
    # A record's reproduce line may give the target's JSON: it reads back as the same Target.
    assert commands.target_from_flags("scaling", {"target": target.as_parameter}, "tpu") == target
    assert commands.target_from_flags("scaling", {}, None) is None


@pytest.mark.parametrize(("check", "name", "backend", "message", "tip"), [
    ("scaling", "tpu:v5e:2x3", None, "unknown --target 'tpu:v5e:2x3'", "did you mean tpu:v5e:2x4?"),
    ("scaling", "tpu:v5e:2x2", "cpu", "--target tpu:v5e:2x2 installs the release for tpu", "drop --backend"),
    ("correctness", "tpu:v5e:2x2", None, "--target is for the scaling check", "nox -s scaling-0.12.0.1"),
])
def test_a_target_that_cannot_be_is_a_usage_error(check: str, name: str, backend: str | None, message: str,
                                                  tip: str) -> None:
    with pytest.raises(UsageError) as raised:
        commands.target_from_flags(check, {"target": name}, backend)
    assert message in raised.value.render() and tip in raised.value.render()


def test_a_release_too_old_for_the_target_is_not_installable_before_any_index_is_asked(tmp_path: Path, capsys,
                                                                                        monkeypatch) -> None:
    monkeypatch.setattr(install_plan, "_resolve", lambda *a, **k: pytest.fail("uv was asked to resolve"))
    code = cli.main(["run", "scaling", "0.5.0", "--target", "tpu:v5e:2x2"], log=lambda m: None,
                    matrix_path=matrix_file(tmp_path, refused_url()))
    assert code == exit_codes.EXIT_NOT_INSTALLABLE
    lines = capsys.readouterr().out.splitlines()
    assert lines[:3] == [
        "== scaling · jax 0.5.0 · tpu · compiled for TPU v5e 2x2 (4 devices), not run: NOT INSTALLABLE HERE",
        "   jax 0.5.0 cannot compile for TPU v5e 2x2 (4 devices): the kit compiles for tpu targets from jax 0.5.3 on "
        "(kit.targets.LOWEST_RELEASE), so nothing was installed",
        "   what to do: compile for it with jax 0.5.3 or later",
    ]
    [record] = [json.loads(path.read_text()) for path in (tmp_path / "results").glob("*.json")]
    assert record["requested"]["target"]["name"] == "tpu:v5e:2x2"
