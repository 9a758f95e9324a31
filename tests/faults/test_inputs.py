"""Inputs that name something that is not there (issue 29): refused where they enter, exit 2, one sentence naming
the input, no record; nothing about a release is concluded from a typo.

docs/faults.md, "Inputs", lists each case with what the kit says. The commands run as a user runs them
(``python -m kit ...`` in a folder with its own matrix.toml) where that is cheap.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from kit import cli, exit_codes
from kit.config import load_matrix
from kit.errors import ConfigError
from tests.fake_index import refused_url

ROOT = Path(__file__).resolve().parents[2]


def write_matrix(folder: Path, install_extra: str = "", release_extra: str = "") -> Path:
    """A matrix whose index refuses connections: a command that asked it would exit 4, not 2."""
    path = folder / "matrix.toml"
    path.write_text(f'[kit]\nresults_dir = "results"\nenvs_dir = "envs"\n'
                    f'[install]\nindex_url = "{refused_url()}"\npythons = ["3.11"]\njaxlib_archive = ""\n{install_extra}'
                    f'[[release]]\nversion = "0.6.0"\n{release_extra}[checks.scaling]\n', encoding="utf-8")
    return path


def run_kit(folder: Path, *argv: str) -> tuple[subprocess.CompletedProcess[str], float]:
    """``python -m kit ARGV`` from ``folder`` (its matrix.toml), as a user runs it; and its wall time."""
    started = time.monotonic()
    proc = subprocess.run([sys.executable, "-m", "kit", *argv], cwd=folder, capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(ROOT), "KIT_CACHE_DIR": str(folder / "cache")},
                          timeout=120)
    return proc, time.monotonic() - started


def no_records(folder: Path) -> bool:
    results = folder / "results"
    return not results.exists() or not any(results.rglob("*.json"))


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
