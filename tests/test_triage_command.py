"""kit/triage/command.py: the triage command's options, and the bisect it hands back with ``--run``.

tests/test_triage_triage.py runs the command end to end through `kit.cli` (no report, an unreadable one, a bad
--good, GitHub out of reach, --run); here the triage itself is stood in for, so what is checked is what this
module decides: the options it passes on, the refusals before anything is read, and the bisect's arguments.
"""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from kit.config import Matrix, parse_matrix
from kit.errors import UsageError
from kit.triage import command
from kit.triage.triage import TriageOptions


@pytest.fixture
def matrix(tmp_path: Path) -> Matrix:
    return parse_matrix({"release": [{"version": "0.6.0"}], "checks": {"scaling": {}}}, tmp_path / "matrix.toml")


@pytest.fixture
def report(tmp_path: Path) -> Path:
    path = tmp_path / "issues" / "slow.md"
    path.parent.mkdir()
    path.write_text("```python\nimport jax\n```\n")
    return path


class StandIn:
    """The triage as the command sees it: the options it was given, and a result with a bisect to propose."""

    def __init__(self, bisect_argv: list[str], check: Path) -> None:
        self.given: list[TriageOptions] = []
        self.result = SimpleNamespace(bisect_argv=bisect_argv, check=SimpleNamespace(path=check),
                                      judged_runs=[SimpleNamespace(version="0.6.0")])

    def __call__(self, matrix: Matrix, options: TriageOptions, log: Any) -> Any:
        self.given.append(options)
        return self.result


@pytest.fixture
def stand_in(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> StandIn:
    made = StandIn(["--script", "checks/slow.py", "--good", "0.5.0", "--bad", "0.6.0"], tmp_path / "checks" / "slow.py")
    monkeypatch.setattr(command, "triage", made)
    monkeypatch.setattr(command, "answer_lines", lambda result: ["== triage: stood in"])
    return made


def test_a_file_and_an_issue_together_are_refused_before_either_is_read(matrix: Matrix, report: Path,
                                                                        stand_in: StandIn) -> None:
    # Was it the file or the issue? Reading one and ignoring the other would triage the wrong report unnoticed.
    with pytest.raises(UsageError, match="triage needs one report"):
        command.main(matrix, [str(report), "--issue", "jax-ml/jax#1"], lambda line: None)
    assert stand_in.given == []


@pytest.mark.parametrize("flag", ["--reported", "--newest"])
def test_a_release_flag_that_is_no_release_is_refused_naming_the_flag(matrix: Matrix, report: Path,
                                                                     stand_in: StandIn, flag: str) -> None:
    with pytest.raises(UsageError, match=f"{flag} 'latest' is not a plain JAX release number"):
        command.main(matrix, [str(report), flag, "latest"], lambda line: None)
    assert stand_in.given == []


def test_the_options_passed_on_are_the_command_line_s(matrix: Matrix, report: Path, stand_in: StandIn,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    argv = [str(report), "--block", "2", "--name", "slow", "--reported", "0.5.1", "--good", "0.5.0", "--commits"]
    assert command.main(matrix, argv, lambda line: None) == (0, None, [])  # no --run: nothing handed back
    (given,) = stand_in.given
    assert given.source == "issues/slow.md"  # relative to the project: it names the check and the report
    assert (given.block, given.name, given.reported, given.good, given.newest, given.commits) == (
        2, "slow", "0.5.1", "0.5.0", "", True)
    assert given.reproduce == "python -m kit triage issues/slow.md " + " ".join(argv[1:])  # no absolute path
    assert capsys.readouterr().out == "== triage: stood in\n"


def test_the_session_s_own_command_is_the_reproduction_when_given(matrix: Matrix, report: Path,
                                                                  stand_in: StandIn) -> None:
    command.main(matrix, [str(report)], lambda line: None, reproduce="nox -s triage -- issues/slow.md")
    assert stand_in.given[0].reproduce == "nox -s triage -- issues/slow.md"


def test_run_hands_back_the_bisect_with_the_check_s_whole_path_and_leaves_the_printed_one(
        matrix: Matrix, report: Path, stand_in: StandIn, tmp_path: Path) -> None:
    code, handed, runs = command.main(matrix, [str(report), "--run"], lambda line: None)
    assert runs == stand_in.result.judged_runs  # triage's runs judged by its check go to the bisect too
    assert code == 0
    assert (handed == ["--script", str(tmp_path / "checks" / "slow.py"), "--good", "0.5.0",
                                    "--bad", "0.6.0"])
    # The result's own command is the one printed, relative: handing back must not rewrite it in place.
    assert stand_in.result.bisect_argv[1] == "checks/slow.py"


def test_run_without_a_bisect_to_propose_hands_back_nothing(matrix: Matrix, report: Path, stand_in: StandIn) -> None:
    stand_in.result.bisect_argv = []  # not reproduced where reported: no bisect
    assert command.main(matrix, [str(report), "--run"], lambda line: None) == (0, None, [])


def test_a_command_quoted_in_records_names_no_absolute_path(tmp_path: Path) -> None:
    # The records and the bisect's report quote it, and they are pasted into bug threads.
    (tmp_path / "issues").mkdir()
    (tmp_path / "issues" / "slow.md").write_text("the report\n")  # a word is a path of this machine's where one is
    given = f"nox -s triage -- {tmp_path / 'issues' / 'slow.md'} --run --jax-repo={tmp_path.parent / 'jax'}"
    # The clone is kept as given: a reproduce line must run (issue 58); a placeholder made --commits refuse it.
    assert command.shown_command(given, tmp_path) == \
        f"nox -s triage -- issues/slow.md --run --jax-repo={tmp_path.parent / 'jax'}"
    assert command.shown_command("nox -s triage -- 'my issue.md' --block 2", tmp_path) == (
        "nox -s triage -- 'my issue.md' --block 2")
