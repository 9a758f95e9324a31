"""kit/bisect/options.py: the bisect's command line, checked where it enters, and the names made from it.

What the driver suites already cover (an unknown check, a bad version, a missing script, --pin's shape, --slurm's
companions, a script's settings on a --check) is not repeated here; these are the remaining refusals, the
argument types' boundaries, and the pure helpers (`shown_argv`, `bisect_name`, `script_name`).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from kit.bisect.options import BisectOptions, parse_options, script_name, shown_argv
from kit.bisect.specs import bisect_name
from kit.config import Matrix, parse_matrix
from kit.errors import UsageError

CHECKS = {"scaling": {"devices": [1, 2], "batch": 64, "timeout_s": 60}}


@pytest.fixture
def matrix(tmp_path: Path) -> Matrix:
    """A matrix whose project folder is tmp_path, so paths inside it are shown relative to it."""
    return parse_matrix({"release": [{"version": "0.4.35"}, {"version": "0.6.0"}], "checks": CHECKS},
                        tmp_path / "matrix.toml")


BOUNDS = ["--good", "0.4.35", "--bad", "0.6.0"]


@pytest.mark.parametrize(("argv", "message"), [
    # Each refusal is its own rule: a plausible bug is a condition checked with `or` where `and` was meant.
    (["--check", "scaling", "--preset", "big", *BOUNDS], None),  # allowed: the refusal is only for scripts
    (["--check", "scaling", "--confirm", "-1", *BOUNDS], "--confirm must be 0 or more"),
    (["--check", "scaling", "--metric", "t_ms", "--good", "0.4.35"], "--metric needs --good and --bad"),
    (["--check", "scaling", "--metric", "t_ms", "--bad", "0.6.0"], "--metric needs --good and --bad"),
    (["--check", "scaling", "--metric", "t_ms", "--jobs", "2", *BOUNDS], "--metric runs one probe at a time"),
    (["--check", "scaling", "--commits", "--all", *BOUNDS], "--commits narrows one change"),
    (["--check", "scaling", "--commits", "--slurm", *BOUNDS], "--commits runs its commit probes here"),
    (["--check", "scaling", "--time", "00:10:00", *BOUNDS], "--partition and --time go with --slurm"),
])
def test_each_combination_that_cannot_run_is_refused_before_anything_runs(
        matrix: Matrix, argv: list[str], message: str | None) -> None:
    if message is None:
        assert parse_options(matrix, argv).preset == "big"
        return
    with pytest.raises(UsageError, match=re.escape(message)):
        parse_options(matrix, argv)


def test_preset_is_refused_for_a_script(matrix: Matrix, tmp_path: Path) -> None:
    script = tmp_path / "repro.py"
    script.write_text("print('ok')\n")
    with pytest.raises(UsageError, match="--preset only applies to --check"):
        parse_options(matrix, ["--script", str(script), "--preset", "big", *BOUNDS])


def test_good_and_bad_that_are_the_same_release_are_refused_however_spelt(matrix: Matrix) -> None:
    # Compared as versions, not strings: "0.6" and "0.6.0" are one release, and searching between them finds nothing.
    with pytest.raises(UsageError, match="both 0.6"):
        parse_options(matrix, ["--check", "scaling", "--good", "0.6", "--bad", "0.6.0"])


def test_metric_with_both_bounds_and_one_job_is_accepted(matrix: Matrix) -> None:
    # Guards the --metric refusals against firing on the one combination they allow (jobs defaults to 1).
    options = parse_options(matrix, ["--check", "scaling", "--metric", "t_ms", "--factor", "1.01", *BOUNDS])
    assert (options.metric, options.factor, options.jobs, options.slurm) == ("t_ms", 1.01, 1, None)


@pytest.mark.parametrize(("flag", "value", "message"), [
    ("--factor", "1", "must be a finite number above 1"),  # exactly 1 is no step at all: the bound is exclusive
    ("--factor", "inf", "must be a finite number above 1"),
    ("--factor", "nan", "must be a finite number above 1"),  # nan > 1 is False, but so is nan <= 1
    ("--factor", "two", "must be a finite number above 1"),
    ("--jobs", "1.5", "1 or more"),
    ("--jobs", "-2", "1 or more"),
    ("--host-devices", "", "must be a positive whole number"),
    ("--timeout", "0", "--timeout"),
])
def test_an_argument_outside_its_range_is_a_usage_error_naming_the_flag(
        matrix: Matrix, flag: str, value: str, message: str) -> None:
    with pytest.raises(UsageError, match=re.escape(message)):
        parse_options(matrix, ["--check", "scaling", *BOUNDS, flag, value])


def test_pins_are_put_in_normal_form_sorted_and_a_repeat_at_one_version_is_kept_once(matrix: Matrix) -> None:
    # The pins name the bisect's files and key its probes: two spellings of one pin must give one value.
    options = parse_options(matrix, ["--check", "scaling", *BOUNDS, "--pin", "SciPy==1.14.1", "--pin",
                                     "ML_Dtypes==0.4.0", "--pin", "scipy==1.14.1"])
    assert options.pins == ("ml-dtypes==0.4.0", "scipy==1.14.1")


@pytest.mark.parametrize("pin", ["numpy[extra]==2.2.1", "numpy==2.2.1; python_version<'3.10'", "numpy==2.2.1,!=2.0",
                                 "numpy"])
def test_a_pin_with_extras_markers_two_specifiers_or_none_is_refused(matrix: Matrix, pin: str) -> None:
    with pytest.raises(UsageError, match="NAME==VERSION"):
        parse_options(matrix, ["--check", "scaling", *BOUNDS, "--pin", pin])


def test_a_changelog_that_is_a_folder_is_named_as_one(matrix: Matrix, tmp_path: Path) -> None:
    # Was: any unreadable --changelog said "not found"; a folder must be said to be a folder.
    with pytest.raises(UsageError, match=r"--changelog .* (is a folder|directory)"):
        parse_options(matrix, ["--check", "scaling", *BOUNDS, "--changelog", str(tmp_path)])


def test_a_script_inside_the_project_is_shown_relative_and_its_check_carries_the_settings(
        matrix: Matrix, tmp_path: Path) -> None:
    script = tmp_path / "cases" / "my repro.py"
    script.parent.mkdir()
    script.write_text("print('ok')\n")
    options = parse_options(matrix, ["--script", str(script), "--host-devices", "3", "--timeout", "30", *BOUNDS])
    assert options.script == script.resolve()
    assert options.script_shown == "cases/my repro.py"
    assert options.subject == "script-my_repro"  # a space would break the record file names
    assert options.script_check is not None
    assert options.script_check.timeout_s == 30
    assert options.script_check.host_devices == 3
    assert options.argv_shown[1] == "cases/my repro.py"  # no absolute path in what the report quotes


def test_a_check_has_no_script_check_and_the_script_timeout_defaults_only_for_scripts(matrix: Matrix) -> None:
    options = parse_options(matrix, ["--check", "scaling", *BOUNDS])
    assert options.script_check is None
    assert options.timeout is None
    assert options.subject == "scaling"


@pytest.mark.parametrize(("stem", "name"), [
    ("repro", "script-repro"), ("my.repro v2", "script-my_repro_v2"), ("a-b_c", "script-a-b_c"),
    ("ünïcode", "script-ünïcode"),  # isalnum keeps letters beyond ASCII; the file system takes them
])
def test_script_name_keeps_only_what_a_check_name_may_hold(stem: str, name: str) -> None:
    assert script_name(Path(f"/x/{stem}.py")) == name


def test_script_name_without_a_script_is_not_empty() -> None:
    assert script_name(None) == "script-unknown"


def test_shown_argv_makes_only_path_flags_absolute_values_relative_or_placeholders(tmp_path: Path) -> None:
    project = tmp_path / "project"
    argv = ["--out", str(project / "out"), f"--changelog={project / 'CHANGELOG.md'}", "--bad-if", "/no/such/path",
            "--find-links", "https://example.org/wheels", f"--jax-repo={tmp_path / 'jax'}", "--out=relative/dir"]
    assert shown_argv(argv, project) == (
        "--out", "out", "--changelog=CHANGELOG.md",
        "--bad-if", "/no/such/path",  # a regex that looks like a path is the user's text: kept as written
        "--find-links", "https://example.org/wheels",  # a URL is not a path
        f"--jax-repo={tmp_path / 'jax'}",  # outside the project and home: as given, so the line runs (issue 58)
        "--out=relative/dir")


def test_shown_argv_leaves_a_path_flag_s_value_that_is_the_next_flag_alone(tmp_path: Path) -> None:
    # "--out" followed by "--fresh": only a value after a path flag is a path; "--fresh" is not rewritten, and the
    # flag after it is not mistaken for one.
    assert shown_argv(["--out", "--fresh", "/abs"], tmp_path) == ("--out", "--fresh", "/abs")


def _options(**changes: object) -> BisectOptions:
    base: dict[str, object] = dict(check="scaling", script=None, good="0.6.0", bad="0.4.35")
    base.update(changes)
    return BisectOptions(**base)  # type: ignore[arg-type]


def test_bisect_name_names_every_setting_that_changes_the_answer() -> None:
    # Two bisects that can give different answers must not share files: each setting appears in the name.
    plain = bisect_name(_options().specs, "0.6.0", "0.4.35")
    assert plain == "scaling-good0.6.0-bad0.4.35-cpu"
    names = {bisect_name(_options(**change).specs, "0.6.0", "0.4.35") for change in (
        {}, {"preset": "big"}, {"scan": True}, {"metric": "t_ms"}, {"metric": "t_ms", "factor": 2.0},
        {"commits": True}, {"pins": ("numpy==2.2.1",)}, {"backend": "cuda"})}
    assert len(names) == 8
    full = bisect_name(_options(preset="big", scan=True, metric="t ms", factor=1.25, commits=True,
                                pins=("numpy==2.2.1", "scipy==1.14.1")).specs, "0.6.0", "0.4.35")
    assert full == "scaling-good0.6.0-bad0.4.35-cpu-big-all-t_ms-x1.25-commits-pin-numpy-2.2.1-pin-scipy-1.14.1"


def test_bisect_name_is_file_name_safe_whatever_the_metric_is_called() -> None:
    name = bisect_name(_options(metric="../../etc/passwd").specs, "0.6.0", "0.4.35")
    assert "/" not in name
    assert re.fullmatch(r"[A-Za-z0-9._-]+", name)


@pytest.mark.parametrize(("op", "named"), [("train.py:40:triangular_solve", "triangular_solve"), ("train.py:40", "")])
def test_explains_op_names_the_primitive_the_commit_leads_are_narrowed_to(
        matrix: Matrix, tmp_path: Path, op: str, named: str) -> None:
    program = tmp_path / "train.py"
    program.write_text("import jax\nprint(jax.__version__)\n")
    options = parse_options(matrix, ["--explain", str(program), "--op", op, *BOUNDS])
    assert options.explained_op == named
    assert parse_options(matrix, ["--check", "scaling", *BOUNDS]).explained_op == ""


def test_target_installs_the_chips_compiler_and_each_probe_compiles_for_it_untimed(matrix: Matrix) -> None:
    import json

    from kit.bisect.run_spec import run_spec

    options = parse_options(matrix, ["--check", "scaling", "--target", "tpu:v5e:2x2", *BOUNDS])
    assert options.backend == "tpu" and options.target is not None and options.target.name == "tpu:v5e:2x2"
    spec = run_spec(matrix, options.specs.runs)
    assert spec.install.backend == "tpu"
    # The target travels typed; it is text only in the runs' parameters (the repro's --target, the record's).
    assert "target" not in spec.overrides and spec.asked.target == options.target
    assert json.loads(str(spec.parameters["target"]))["title"] == "TPU v5e 2x2 (4 devices)"
    assert spec.overrides["repeats"] == 0
    for argv, message in ((["--check", "scaling", "--target", "tpu:v5e:2x2", "--metric", "t_ms", *BOUNDS], "no metric"),
                          (["--check", "scaling", "--target", "tpu:v5e:2x2", "--backend", "cuda", *BOUNDS],
                           "cannot go with --backend cuda"),
                          (["--check", "scaling", "--target", "tpu:v9", *BOUNDS], "unknown --target")):
        with pytest.raises(UsageError, match=re.escape(message)):
            parse_options(matrix, argv)
    from kit.bisect.probe.release_subject import reproduce_command

    said = reproduce_command(matrix, options.specs.runs, options.specs.report, "0.6.0", spec.overrides)
    assert said == "nox -s scaling-0.6.0 -- --repeats 0 --warmup 0 --target tpu:v5e:2x2"  # the name, not its JSON
