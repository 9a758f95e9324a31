"""Settings that were taken and then failed far from where they were given: refused where they enter, exit 2.

``host_devices = 100000000`` (XLA makes each forced CPU device), ``index_url
= ""`` (blamed on the network at the first resolve), ``matrix --only ""`` (an
unset shell variable: it swept every release), ``report --out FILE`` (blamed
on the disk: "File exists ... free some space"). docs/faults.md, "Values and
records".
"""

from __future__ import annotations

from pathlib import Path

import pytest

from kit import cli, exit_codes


def matrix(folder: Path, install: str = "", check: str = "") -> str:
    (folder / "mine.py").write_text("print('ran')\n")
    path = folder / "matrix.toml"
    path.write_text(f'[kit]\nresults_dir = "results"\n[install]\n{install}[[release]]\nversion = "0.6.0"\n'
                    f'[checks.scaling]\n[checks.mine]\nscript = "mine.py"\n{check}', encoding="utf-8")
    return str(path)


@pytest.mark.parametrize(("install", "check", "error"), [
    ("", "host_devices = 100000000\n", "ERROR: checks.mine.host_devices must be 1 to 4096"),
    ('index_url = ""\n', "", "ERROR: install.index_url '' is not the URL of a package index"),
    ('index_url = "pypi.org/simple"\n', "", "ERROR: install.index_url 'pypi.org/simple' is not the URL of a package index"),
], ids=["host_devices", "empty-index-url", "index-url-without-scheme"])
def test_a_setting_that_cannot_work_is_refused_at_load(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                        install: str, check: str, error: str) -> None:
    assert cli.main(["plan", "0.6.0"], matrix_path=matrix(tmp_path, install, check)) == exit_codes.EXIT_USAGE
    assert capsys.readouterr().err.splitlines()[0] == error


def test_host_devices_on_bisects_command_line_is_bounded_the_same(tmp_path: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["bisect", "--script", str(tmp_path / "mine.py"), "--good", "0.6.0", "--bad", "0.5.0",
            "--host-devices", "100000000"]
    assert cli.main(argv, matrix_path=matrix(tmp_path)) == exit_codes.EXIT_USAGE
    assert capsys.readouterr().err.splitlines()[0] == (
        "ERROR: argument --host-devices: must be a positive whole number up to 4096, e.g. 4, got '100000000'")


@pytest.mark.parametrize("flag", ["--only", "--checks"])
def test_an_empty_list_to_the_sweep_names_nothing_and_sweeps_nothing(tmp_path: Path, flag: str,
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["matrix", flag, ""], matrix_path=matrix(tmp_path)) == exit_codes.EXIT_USAGE
    assert capsys.readouterr().err.splitlines() == [
        f"ERROR: {flag} '' names nothing", f"TIP: give {flag} a comma-separated list, or leave it out"]
    assert not (tmp_path / "results").exists()


def test_a_report_out_that_is_a_file_is_refused_and_left_alone(tmp_path: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "passwd"
    target.write_text("root:x:0:0::/root:/bin/sh\n")
    (tmp_path / "results").mkdir()
    code = cli.main(["report", "--out", str(target), "--no-plots"], matrix_path=matrix(tmp_path))
    assert code == exit_codes.EXIT_USAGE
    assert capsys.readouterr().err.splitlines()[0] == f"ERROR: --out {str(target)!r} is a file, not a folder"
    assert target.read_text() == "root:x:0:0::/root:/bin/sh\n"
