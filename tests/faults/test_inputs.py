"""Inputs that name something that is not there: refused where they enter, exit 2, one sentence naming
the input, no record; nothing about a release is concluded from a typo.

docs/faults.md, "Inputs", lists each case with what the kit says. The commands run as a user runs them
(``python -m kit ...`` in a folder with its own matrix.toml) where that is cheap.
"""

from __future__ import annotations

import os
import re
from dataclasses import replace
from pathlib import Path

import pytest

from kit import cli, exit_codes
from kit.config import load_matrix
from kit.errors import ConfigError
from kit.install.plan import InstallPlan, Resolution
from kit.install.refusals import blamed_input
from tests.faults.kit_commands import run_kit
from tests.fake_index import jax_releases, refused_url, serve_index, wheel



def write_matrix(folder: Path, install_extra: str = "", release_extra: str = "", index_url: str = "",
                 checks: str = "", releases: tuple[str, ...] = ("0.6.0",)) -> Path:
    """A matrix whose index refuses connections unless ``index_url``: a command that asked it would exit 4, not 2."""
    path = folder / "matrix.toml"
    blocks = "".join(f'[[release]]\nversion = "{version}"\n{release_extra}' for version in releases)
    path.write_text(f'[kit]\nresults_dir = "results"\nenvs_dir = "envs"\n'
                    f'[install]\nindex_url = "{index_url or refused_url()}"\npythons = ["3.11"]\njaxlib_archive = ""\n'
                    f'{install_extra}{blocks}[checks.scaling]\n{checks}', encoding="utf-8")
    return path


def no_records(folder: Path) -> bool:
    """No record anywhere under ``folder``: the results, and a bisect's records of its probes."""
    return not any('"status"' in path.read_text() for path in folder.rglob("*.json") if "cache" not in path.parts)


# -- item 4: a mistyped --find-links folder


@pytest.mark.parametrize("command", [["run", "scaling", "0.6.0"], ["plan", "0.6.0"],
                                     ["bisect", "--check", "scaling", "--good", "0.6.0", "--bad", "0.5.0"]])
def test_a_find_links_folder_that_is_not_there_is_exit_2_at_once_and_no_record(tmp_path: Path,
                                                                               command: list[str]) -> None:
    write_matrix(tmp_path)
    proc, took = run_kit(tmp_path, *command, "--find-links", "/no/such/dir")
    assert proc.returncode == exit_codes.EXIT_USAGE, proc.stderr
    assert proc.stderr.splitlines() == ["ERROR: --find-links '/no/such/dir' does not exist",
                                        "TIP: give a folder of wheels (.whl files) or the URL of a find-links page"]
    assert no_records(tmp_path)
    assert took < 10  # was 36-40 s of uv looking, then a not-installable record


def test_a_find_links_file_or_relative_typo_says_what_is_there(tmp_path: Path, capsys) -> None:
    matrix = str(write_matrix(tmp_path))
    (tmp_path / "wheel.whl").write_bytes(b"")
    for given, said in ((str(tmp_path / "wheel.whl"), "is a file, not a folder"),
                        ("whels", f"does not exist (looked at {Path('whels').absolute()})")):
        assert cli.main(["plan", "0.6.0", "--find-links", given], matrix_path=matrix) == exit_codes.EXIT_USAGE
        assert capsys.readouterr().err.splitlines()[0] == f"ERROR: --find-links {given!r} {said}"


def test_a_find_links_url_is_left_to_the_network_probe(tmp_path: Path) -> None:
    write_matrix(tmp_path)
    proc, _took = run_kit(tmp_path, "plan", "0.6.0", "--find-links", "http://127.0.0.1:9/wheels/")
    assert proc.returncode == exit_codes.EXIT_NETWORK, proc.stderr  # the index and pages are the network's


@pytest.mark.parametrize(("install", "release", "where"), [
    ('find_links = ["wheels"]\n', "", "install.find_links"),
    ("", 'find_links = ["/no/such/dir"]\n', "release 0.6.0: find_links"),
])
def test_a_find_links_folder_in_matrix_toml_that_is_not_there_is_refused_at_load(tmp_path: Path, install: str,
                                                                                 release: str, where: str) -> None:
    path = write_matrix(tmp_path, install, release)
    with pytest.raises(ConfigError) as refused:
        load_matrix(path)
    shown = "'wheels' does not exist (looked at " + str(tmp_path / "wheels") + ")" if install else \
        "'/no/such/dir' does not exist"
    assert str(refused.value) == f"{where} {shown}"
    (tmp_path / "wheels").mkdir()
    if install:
        assert load_matrix(path).install.find_links == ("wheels",)  # kept as written: the lock's key is unchanged


# -- item 13: a report from a folder of records that is not there


def test_a_report_from_a_results_folder_that_is_not_there_leaves_the_report_alone(tmp_path: Path) -> None:
    write_matrix(tmp_path)
    reports = tmp_path / "reports"
    reports.mkdir()
    for name in ("matrix.md", "matrix.json"):
        (reports / name).write_text(f"{name} of 100 records\n")
    proc, _took = run_kit(tmp_path, "report", "--results", "/no/such/dir", "--out", str(reports), "--no-plots")
    assert proc.returncode == exit_codes.EXIT_USAGE, proc.stderr
    assert proc.stderr.splitlines()[0] == ("ERROR: --results '/no/such/dir' does not exist: matrix.md and "
                                           "matrix.json were left as they were")
    assert [(reports / name).read_text() for name in ("matrix.md", "matrix.json")] == [
        "matrix.md of 100 records\n", "matrix.json of 100 records\n"]


def test_a_report_from_a_file_given_as_results_says_it_is_a_file(tmp_path: Path, capsys) -> None:
    record = tmp_path / "one-record.json"
    record.write_text("{}")
    code = cli.main(["report", "--results", str(record), "--out", str(tmp_path), "--no-plots"],
                    matrix_path=str(write_matrix(tmp_path)))
    assert code == exit_codes.EXIT_USAGE
    assert capsys.readouterr().err.startswith(f"ERROR: --results {str(record)!r} is a file, not a folder")
    assert not (tmp_path / "matrix.md").exists()


# -- item 5: uv kept offline by the user's environment, its cache empty


def test_uv_offline_with_an_empty_cache_is_exit_4_naming_uv_offline_and_no_record(tmp_path: Path) -> None:
    files, blobs = jax_releases(["0.6.0"])
    with serve_index(files, blobs) as served:
        write_matrix(tmp_path, index_url=served.url)
        offline = {"UV_OFFLINE": "1", "UV_CACHE_DIR": str(tmp_path / "empty-uv-cache")}
        planned, _took = run_kit(tmp_path, "plan", "0.6.0", **offline)
        ran, _took = run_kit(tmp_path, "run", "scaling", "0.6.0", **offline)
        online, _took = run_kit(tmp_path, "plan", "0.6.0", UV_OFFLINE="0", UV_CACHE_DIR=str(tmp_path / "uv-cache"))
    for proc in (planned, ran):
        assert proc.returncode == exit_codes.EXIT_NETWORK, proc.stderr
        assert proc.stderr.splitlines()[0] == (
            "ERROR: jax 0.6.0 did not resolve with uv offline (UV_OFFLINE=1 in the environment): uv read only its "
            "cache, which may lack what the release needs, so nothing is known about the release")
        assert proc.stderr.splitlines()[1].startswith("TIP: unset UV_OFFLINE so that uv can ask the index")
    assert "NOT INSTALLABLE" not in planned.stdout
    assert no_records(tmp_path)
    assert online.returncode == exit_codes.EXIT_OK, online.stderr  # the same release, uv allowed online
    assert "python 3.11 resolves to:" in online.stdout


# -- item 8: a --requires or --pin that uv blames is the input's fault, not the release's


def test_a_required_package_not_on_the_index_is_exit_2_not_an_era_problem(tmp_path: Path) -> None:
    (tmp_path / "uses_it.py").write_text("import no_such_package_xyz\n")
    files, blobs = jax_releases(["0.6.0"])
    with serve_index(files, blobs) as served:
        write_matrix(tmp_path, index_url=served.url, checks='[checks.mine]\nscript = "uses_it.py"\n')
        proc, _took = run_kit(tmp_path, "run", "mine", "0.6.0", "--requires", "no-such-package-xyz",
                              UV_CACHE_DIR=str(tmp_path / "uv-cache"))
    assert proc.returncode == exit_codes.EXIT_USAGE, proc.stderr
    assert proc.stderr.splitlines() == [
        f"ERROR: the check requires no-such-package-xyz, and no-such-package-xyz is not on the package index "
        f"({served.url})",
        "TIP: check the name (the one pip installs, e.g. scikit-learn for sklearn) in --requires or the check's "
        "requires in matrix.toml"]
    assert no_records(tmp_path)


def test_a_pin_the_releases_python_cannot_install_is_exit_2_naming_the_pin(tmp_path: Path) -> None:
    (tmp_path / "check.py").write_text("import sys\nsys.exit(0)\n")
    files, blobs = jax_releases(["0.5.0", "0.6.0"])
    name, blob = wheel("numpy", "1.23.0")
    files["numpy"].append((name, "2023-01-01T00:00:00Z"))
    blobs[name] = blob
    with serve_index(files, blobs, requires_python={name: ">=3.12"}) as served:  # not for Python 3.11
        write_matrix(tmp_path, index_url=served.url, releases=("0.5.0", "0.6.0"))
        proc, took = run_kit(tmp_path, "bisect", "--script", "check.py", "--good", "0.6.0", "--bad", "0.5.0",
                             "--pin", "numpy==1.23.0", UV_CACHE_DIR=str(tmp_path / "uv-cache"))
    assert proc.returncode == exit_codes.EXIT_USAGE, proc.stderr
    error = next(line for line in proc.stderr.splitlines() if line.startswith("ERROR:"))
    assert re.match(r"ERROR: the pin numpy==1\.23\.0 cannot be installed with jax 0\.[56]\.0 on Python 3\.11: "
                    r"Because the requested Python version \(>=3\.11\) does not satisfy Python>=3\.12", error)
    assert "numpy==1.23.0 depends on Python>=3.12" in error
    assert "TIP: drop or change --pin numpy==1.23.0" in proc.stderr
    assert "--bad" not in error
    assert no_records(tmp_path)
    assert took < 60


PLAN = InstallPlan(jax="0.6.0", backend="cpu", requirements=("jax[cpu]==0.6.0", "scipy"),
                   exclude_newer="2025-04-30T00:00:00Z", index_url="https://pypi.org/simple", pythons=("3.11",))


@pytest.mark.parametrize(("requires", "pins", "uv_said", "blamed"), [
    ((), ("numpy==9.9.9",), "cause: Because there is no version of numpy==9.9.9 and you require numpy==9.9.9, we can "
     "conclude that your requirements are unsatisfiable.",
     "--pin numpy==9.9.9: numpy 9.9.9 is not on the package index (https://pypi.org/simple)"),
    ((), ("ml_dtypes==0.1.0",), "cause: Because all versions of jax depend on ml-dtypes>=0.4 and you require "
     "ml-dtypes==0.1.0, we can conclude that your requirements are unsatisfiable.",
     "the pin ml_dtypes==0.1.0 cannot be installed with jax 0.6.0 on Python 3.11: Because all versions of jax depend "
     "on ml-dtypes>=0.4 and you require ml-dtypes==0.1.0, we can conclude that your requirements are unsatisfiable."),
    # An extra package with no version of the release's era is the era's answer: a record says so.
    (("flax",), (), "cause: Because there are no versions of flax and you require flax, we can conclude that your "
     "requirements are unsatisfiable. hint: `flax` was filtered by `exclude-newer`", None),
    # Neither input named: the release's own jaxlib is missing.
    (("flax",), ("numpy==2.2.1",), "cause: Because there is no version of jaxlib==0.6.0 and jax[cpu]==0.6.0 depends "
     "on jaxlib==0.6.0, we can conclude that your requirements are unsatisfiable.", None),
])
def test_whose_input_uvs_refusal_blames(requires: tuple[str, ...], pins: tuple[str, ...], uv_said: str,
                                        blamed: str | None) -> None:
    plan = replace(PLAN, requirements=PLAN.requirements + requires + pins, requires=requires, pins=pins)
    found = blamed_input(plan, [Resolution("3.11", ok=False, error=uv_said)])
    assert (found.message if found else None) == blamed


# -- the weak ones: each path said as what it is


def _loop(folder: Path) -> Path:
    loop = folder / "loop.py"
    loop.symlink_to(loop)
    return loop


def _fifo(folder: Path) -> Path:
    fifo = folder / "CHANGELOG.md"
    os.mkfifo(fifo)
    return fifo


@pytest.mark.parametrize(("flag", "make", "said"), [
    ("--script", lambda folder: folder, "ERROR: script {path} is a folder, not a file"),
    ("--script", _loop, "ERROR: script {path} is a symbolic link loop (it leads back to itself)"),
    ("--changelog", _fifo, "ERROR: --changelog {path} is not a regular file (a pipe, a device or a socket)"),
    ("--changelog", lambda folder: Path("/dev/zero"), "ERROR: --changelog {path} is not a regular file (a pipe, a "
                                                      "device or a socket)"),
])
def test_a_bisect_path_that_is_not_a_file_is_said_as_what_it_is(tmp_path: Path, capsys, flag: str, make,
                                                                said: str) -> None:
    path = make(tmp_path)
    script = ["--script", str(path)] if flag == "--script" else ["--check", "scaling", "--changelog", str(path)]
    code = cli.main(["bisect", *script, "--good", "0.6.0", "--bad", "0.5.0"], matrix_path=str(write_matrix(tmp_path)))
    assert code == exit_codes.EXIT_USAGE
    assert capsys.readouterr().err.splitlines()[0] == said.format(path=path)


def test_an_interpreter_that_is_a_symbolic_link_loop_is_said_so(tmp_path: Path, capsys) -> None:
    loop = _loop(tmp_path)
    code = cli.main(["run", "scaling", "--python", str(loop)], matrix_path=str(write_matrix(tmp_path)))
    assert code == exit_codes.EXIT_USAGE
    assert capsys.readouterr().err.splitlines()[0] == f"ERROR: {loop} is a symbolic link loop (it leads back to itself)"


def test_a_results_dir_that_is_a_file_is_refused_at_load(tmp_path: Path) -> None:
    (tmp_path / "results").write_text("not a folder\n")
    with pytest.raises(ConfigError, match=r"^kit\.results_dir '.*/results' is a file, not a folder$"):
        load_matrix(write_matrix(tmp_path))


def test_only_a_release_not_in_the_matrix_suggests_a_command_that_runs(tmp_path: Path, capsys) -> None:
    code = cli.main(["matrix", "--only", "9.9.9"], matrix_path=str(write_matrix(tmp_path)))
    assert code == exit_codes.EXIT_USAGE
    err = capsys.readouterr().err.splitlines()
    assert err[0] == "ERROR: --only 9.9.9: not a release in matrix.toml"
    assert err[1].endswith("or run it once without the matrix: python -m kit run scaling 9.9.9")
    assert "nox -s scaling-9.9.9" not in err[1]  # nox has no such session: it would refuse it
