"""A bug report as a hostile or unlucky user hands it to triage (docs/faults.md, "Triage"): code a reader of the
report cannot see never runs, a stranger's issue runs only when confirmed, a name is never a path, a pipe or
/dev/zero is one sentence, and two reports of one name keep two checks."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from kit import cli, exit_codes
from kit.triage import block_outcome
from kit.triage import triage as flow
from kit.triage.difference import Run

ROOT = Path(__file__).resolve().parents[2]
MATRIX_TOML = '[[release]]\nversion = "0.6.0"\n\n[checks.scaling]\n'
VISIBLE = "```python\nimport jax\nprint(jax.numpy.ones(2))\n```\nFails with jax 0.6.0:\n```\nValueError: x\n```\n"


def _project(tmp_path: Path) -> Path:
    (tmp_path / "matrix.toml").write_text(MATRIX_TOML)
    return tmp_path / "matrix.toml"


@pytest.fixture
def runs(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The checks' runs, stood in for: what ran, and the code each check held."""
    ran: list[str] = []

    def run_on(matrix: Any, options: Any, written: Any, name: str, version: str, devices: Any, log: Any) -> Run:
        ran.append(written.path.read_text())
        return Run(version, "affected", "stood in", block_outcome.outcome(1, "", ValueError("x")))

    monkeypatch.setattr(flow, "run_on", run_on)
    monkeypatch.setattr(flow, "newest_release", lambda *a: "0.9.0")
    return ran


def test_a_block_inside_an_html_comment_never_runs(tmp_path: Path, runs: list[str]) -> None:
    hidden = "<!--\n```python\nimport os\nos.remove('precious')\n```\n-->\n"
    report = tmp_path / "r.md"
    report.write_text(hidden + VISIBLE)
    assert cli.main(["triage", str(report)], matrix_path=str(_project(tmp_path))) == 0
    assert len(runs) == 2
    assert all("os.remove" not in code for code in runs)
    report.write_text("intro <!-- a note\n```python\nimport os\nos.remove('precious')\n```\nend -->\n")
    assert cli.main(["triage", str(report)], matrix_path=str(_project(tmp_path))) == exit_codes.EXIT_USAGE
    assert len(runs) == 2  # nothing else ran: the only block was hidden


def test_a_block_fenced_as_text_is_not_run_even_when_it_is_python(tmp_path: Path, runs: list[str],
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    report = tmp_path / "r.md"
    report.write_text("```text\nimport os\nos.remove('precious')\n```\n")
    assert cli.main(["triage", str(report)], matrix_path=str(_project(tmp_path))) == exit_codes.EXIT_USAGE
    assert "block 1 holds code fenced as another language, which is not run" in capsys.readouterr().err
    assert cli.main(["triage", str(report), "--block", "1"],
                    matrix_path=str(_project(tmp_path))) == exit_codes.EXIT_USAGE
    assert "--block 1 is fenced as text, not as Python" in capsys.readouterr().err
    assert runs == []
    assert not (tmp_path / "checks").exists()


def test_the_runs_are_announced_in_one_line_before_anything_runs(tmp_path: Path, runs: list[str]) -> None:
    said: list[str] = []
    report = tmp_path / "r.md"
    report.write_text(VISIBLE)
    cli.main(["triage", str(report)], log=lambda line: said.append(f"{line} (ran {len(runs)})"),
             matrix_path=str(_project(tmp_path)))
    announced = [line for line in said if "runs the report's code now" in line]
    assert len(announced) == 1
    assert announced[0].endswith("(ran 0)")
    assert "block 1 of r.md on jax 0.6.0 and 0.9.0" in announced[0]


def test_an_issue_from_github_needs_yes_before_it_is_even_fetched(tmp_path: Path, runs: list[str],
                                                                   monkeypatch: pytest.MonkeyPatch,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    from kit.triage import command

    monkeypatch.setattr(command, "read_github_issue", lambda *a: pytest.fail("fetched without --yes"))
    code = cli.main(["triage", "--issue", "jax-ml/jax#25329"], matrix_path=str(_project(tmp_path)))
    err = capsys.readouterr().err.splitlines()
    assert code == exit_codes.EXIT_USAGE
    assert runs == []
    assert err[0].startswith("ERROR: --issue jax-ml/jax#25329 would run the code of an issue nobody has read here")
    assert err[1] == "TIP: read it on https://github.com/jax-ml/jax/issues/25329 first, then add --yes"


@pytest.mark.parametrize("name", ["../../../x", "a/b", "/tmp/x", ".hidden", ""])
def test_a_name_that_is_a_path_is_refused_where_it_enters(tmp_path: Path, runs: list[str], name: str,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    project = tmp_path / "project"
    project.mkdir()
    report = project / "r.md"
    report.write_text(VISIBLE)
    code = cli.main(["triage", str(report), "--name", name], matrix_path=str(_project(project)))
    assert code == exit_codes.EXIT_USAGE
    assert runs == []
    assert "is not a check name" in capsys.readouterr().err
    assert sorted(p.name for p in tmp_path.rglob("*")) == ["matrix.toml", "project", "r.md"]


READ = """
import sys
from pathlib import Path
from kit.errors import UsageError
from kit.triage.issue_source import read_file
try:
    read_file(Path(sys.argv[1]), Path("."))
except UsageError as error:
    print(error)
"""


def _read_in_child(path: Path) -> str:
    # A child, so that a read that blocks fails this test at its timeout instead of hanging the suite.
    done = subprocess.run([sys.executable, "-c", READ, str(path)], cwd=ROOT, capture_output=True, text=True,
                          timeout=20)
    return done.stdout.strip()


def test_a_named_pipe_as_the_report_is_one_sentence_not_a_wait(tmp_path: Path) -> None:
    fifo = tmp_path / "issue.md"
    os.mkfifo(fifo)
    assert _read_in_child(fifo) == f"the report {fifo} is not a regular file (a pipe, a device or a socket)"


@pytest.mark.skipif(not Path("/dev/zero").exists(), reason="no /dev/zero here")
def test_dev_zero_as_the_report_is_one_sentence_not_a_memory_error(tmp_path: Path) -> None:
    assert _read_in_child(Path("/dev/zero")) == "the report /dev/zero is not a regular file (a pipe, a device or a socket)"
    huge = tmp_path / "huge.md"
    with open(huge, "wb") as opened:
        opened.truncate(2**20 + 1)  # sparse: a file larger than any report, costing no disk
    assert _read_in_child(huge) == f"the report {huge} is larger than 1048576 bytes: not a bug report's text"


def test_two_reports_both_named_issue_md_keep_two_checks(tmp_path: Path, runs: list[str]) -> None:
    matrix = _project(tmp_path)
    first, second = tmp_path / "a" / "issue.md", tmp_path / "b" / "issue.md"
    for path, error in ((first, "ValueError: first"), (second, "KeyError: second")):
        path.parent.mkdir()
        body = "print('first')" if path is first else "print('second')"
        path.write_text(f"```python\nimport jax\n{body}\n```\nFails with jax 0.6.0:\n```\n{error}\n```\n")
    assert cli.main(["triage", str(first)], matrix_path=str(matrix)) == 0
    assert cli.main(["triage", str(second)], matrix_path=str(matrix)) == 0
    checks = sorted((tmp_path / "checks").glob("*.py"))
    assert len(checks) == 2
    assert sorted("print('first')" in c.read_text() for c in checks) == [False, True]
    assert cli.main(["triage", str(first)], matrix_path=str(matrix)) == 0  # the same report again: its own check
    assert len(list((tmp_path / "checks").glob("*.py"))) == 2
