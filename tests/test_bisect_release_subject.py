"""kit/bisect/probe/release_subject.py: what a release probe asks the runner for, and the command that reruns it.

Preparing and running go through the runner (tests/test_bisect_probes.py drives them on the fake machine); here
is what the subject decides itself, before anything is installed: the time limit, the request it makes, what it
answers before a release is prepared, and `reproduce_command` for each kind of probe.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from kit.bisect.candidates import Candidate
from kit.bisect.options import parse_options
from kit.bisect.probe.release_subject import ReleaseSubject, reproduce_command
from kit.bisect.run_spec import probe_overrides, run_spec
from kit.config import Matrix, parse_matrix
from kit.check_settings import DEFAULT_TIMEOUT_S
from kit.records import Identity

CHECKS = {"scaling": {"devices": [1, 2], "batch": 64, "timeout_s": 75}}
BOUNDS = ["--good", "0.4.35", "--bad", "0.6.0"]


@pytest.fixture
def matrix(tmp_path: Path) -> Matrix:
    """Two releases in matrix.toml, nothing built (its environments and records folders are empty)."""
    return parse_matrix({"release": [{"version": "0.4.35"}, {"version": "0.6.0"}], "checks": CHECKS,
                         "kit": {"results_dir": str(tmp_path / "results"), "envs_dir": str(tmp_path / "envs")}},
                        tmp_path / "matrix.toml")


def subject(matrix: Matrix, argv: list[str], records_dir: Path | None = None) -> ReleaseSubject:
    options = parse_options(matrix, argv)
    candidates = [Candidate("0.5.0", ("jax==0.5.0",), None, "3.12", "0.5.0"),
                  Candidate("0.6.0", ("jax==0.6.0",), None, None, None)]
    spec = run_spec(matrix, options.specs.runs)
    spec = dataclasses.replace(spec, records_dir=records_dir) if records_dir is not None else spec
    return ReleaseSubject(matrix, spec, options.specs.report, candidates, None, lambda line: None)  # type: ignore[arg-type]


def test_the_time_limit_is_the_command_line_s_else_the_check_s(matrix: Matrix, tmp_path: Path) -> None:
    assert subject(matrix, ["--check", "scaling", *BOUNDS]).timeout == 75
    assert subject(matrix, ["--check", "scaling", "--timeout", "30", *BOUNDS]).timeout == 30
    script = tmp_path / "r.py"
    script.write_text("print(1)\n")
    # A script has no check block: its limit is the scripts' default, not the scaling check's 75.
    assert subject(matrix, ["--script", str(script), *BOUNDS]).timeout == DEFAULT_TIMEOUT_S != 75


def test_before_a_release_is_prepared_it_answers_from_the_index_s_metadata(matrix: Matrix) -> None:
    releases = subject(matrix, ["--check", "scaling", *BOUNDS])
    assert releases.resolved("0.5.0") == ("3.12", "0.5.0")
    assert releases.resolved("0.6.0") == (None, None)
    assert releases.environment_of("0.5.0") is None
    assert releases.environment_state("0.5.0") is None
    assert releases.name_of("0.5.0") == "jax 0.5.0"


def test_a_release_never_built_here_has_no_locked_identity(matrix: Matrix) -> None:
    # Without a lock there is nothing to look the probe up by: None, not an error and not a guess.
    assert subject(matrix, ["--check", "scaling", *BOUNDS]).locked_identity("0.4.35") is None


def test_a_script_is_never_answered_by_a_matrix_record_and_a_check_only_by_one_that_exists(
        matrix: Matrix, tmp_path: Path) -> None:
    script = tmp_path / "r.py"
    script.write_text("print(1)\n")
    here = Identity(subject={"check": "scaling"}, jax="0.4.35", backend="cpu", python="3.13", packages={},
                    install={}, hardware={}, variables={})
    assert subject(matrix, ["--script", str(script), *BOUNDS]).recorded(here, "0.4.35") is None
    assert subject(matrix, ["--check", "scaling", *BOUNDS]).recorded(here, "0.4.35") is None  # no records yet


def test_the_request_carries_the_bisect_s_settings_and_the_candidate_s_python(matrix: Matrix, tmp_path: Path) -> None:
    releases = subject(matrix, ["--check", "scaling", "--pin", "numpy==2.2.1", "-v", *BOUNDS], tmp_path / "elsewhere")
    request = releases.request("0.5.0", tmp_path / "probe.log")
    assert (request.check, request.version) == ("scaling", "0.5.0")
    assert request.install is not None
    assert request.install.python == "3.12"  # the candidate's, tried first
    assert request.install.pins == ("numpy==2.2.1",)  # the spec's install key, held in nothing else
    assert request.echo  # -v: the output on the console too
    assert request.records_dir == tmp_path / "elsewhere"
    assert request.output_log == tmp_path / "probe.log"
    # A verdict probe of scaling on CPU reads only the HLO: it leaves the timings out (its own identity says so).
    assert request.overrides == {"repeats": 0, "warmup": 0}
    assert request.reproduce == "python -m kit run scaling 0.5.0 --repeats 0 --warmup 0"
    quiet = subject(matrix, ["--check", "scaling", *BOUNDS]).request("0.6.0")
    assert quiet.install is not None
    assert quiet.install.python is None  # the index's metadata named none
    assert not quiet.echo
    assert quiet.records_dir is None  # the matrix's own folder


def test_a_metric_probe_keeps_its_timings(matrix: Matrix) -> None:
    # --metric reads what the timings measure: leaving them out would leave it nothing to compare.
    metric = subject(matrix, ["--check", "scaling", "--metric", "t_ms", *BOUNDS]).request("0.5.0")
    assert metric.overrides == {}


@pytest.mark.parametrize(("argv", "version", "command"), [
    # A release matrix.toml lists has its own session; the probe's untimed run is spelt out after `--`.
    (["--check", "scaling", *BOUNDS], "0.4.35", "nox -s scaling-0.4.35 -- --repeats 0 --warmup 0"),
    # One it does not list runs through the kit's own command, with the same flags.
    (["--check", "scaling", *BOUNDS], "0.5.0", "python -m kit run scaling 0.5.0 --repeats 0 --warmup 0"),
    # On a GPU the timings may decide: nothing left out; the backend and preset named, since they are not defaults.
    (["--check", "scaling", "--backend", "cuda", "--preset", "big", *BOUNDS], "0.5.0",
     "python -m kit run scaling 0.5.0 --backend cuda --preset big"),
    (["--check", "scaling", "--backend", "cuda", *BOUNDS], "0.6.0", "nox -s scaling-0.6.0"),
])
def test_the_reproduce_command_reruns_the_probe_as_it_ran(matrix: Matrix, argv: list[str], version: str,
                                                          command: str) -> None:
    options = parse_options(matrix, argv)
    assert reproduce_command(matrix, options.specs.runs, options.specs.report, version, probe_overrides(options.specs.runs, matrix.check("scaling"))) == command


def test_a_script_s_probe_is_reproduced_by_the_bisect_quoted_for_a_shell(matrix: Matrix, tmp_path: Path) -> None:
    script = tmp_path / "r.py"
    script.write_text("print(1)\n")
    options = parse_options(matrix, ["--script", str(script), "--bad-if", "got multiple values", *BOUNDS])
    command = reproduce_command(matrix, options.specs.runs, options.specs.report, "0.5.0", {})
    assert command.startswith("nox -s bisect -- --script ")
    assert "--bad-if 'got multiple values'" in command
