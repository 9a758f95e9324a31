"""kit/triage/triage.py and the ``triage`` command: which bisect a triage proposes from where the check reproduced.

The runs are stood in for (`run_on`): what is tested is the decision and what is printed, not JAX.
tests/test_triage_integration.py runs real releases.
"""

from __future__ import annotations

import dataclasses
import socket
from pathlib import Path
from typing import Any

import pytest

from kit import cli, exit_codes
from kit.config import Matrix, parse_matrix
from kit.triage import block_outcome
from kit.triage import triage as flow
from kit.triage.check_writer import DIFFERENCE_BAD_IF
from kit.triage.difference import Run
from kit.triage.report_reading import read_report
from tests.fake_index import refused_url

ISSUES = Path(__file__).resolve().parent.parent / "examples" / "issues"
MATRIX_TOML = '[[release]]\nversion = "0.6.0"\n\n[checks.scaling]\n'


def _matrix(tmp_path: Path) -> Matrix:
    return parse_matrix({"kit": {"results_dir": str(tmp_path / "reports" / "results")},
                         "install": {"index_url": refused_url()},
                         "release": [{"version": "0.6.2"}, {"version": "0.6.0"}], "checks": {"scaling": {}}},
                        tmp_path / "matrix.toml")


def stood_in(text: str, behaviour: str) -> Run:
    """A run as the report describes it: ``affected`` raises the reported exception, ``unaffected`` prints a value
    and exits 0, ``inconclusive`` could not run the block at all (no outcome)."""
    if behaviour == "inconclusive":
        return Run("?", "inconclusive", "stood in", None)
    exception = read_report(text).failure.exception
    if behaviour == "affected":
        error = (type(exception.name, (Exception,), {})(exception.message) if exception is not None
                 else RuntimeError("the block failed"))
        return Run("?", "affected", "stood in", block_outcome.outcome(1, "", error))
    return Run("?", behaviour, "stood in", block_outcome.outcome(0, "16.0\n"))


def _triage(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, report: str, verdicts: dict[str, str],
            **options: Any) -> flow.Triage:
    ran: list[str] = []
    text = (ISSUES / report).read_text() if report.endswith(".md") else report

    def run_on(matrix: Matrix, opts: Any, written: Any, name: str, version: str, devices: Any, log: Any) -> Run:
        ran.append(version)
        return dataclasses.replace(stood_in(text, verdicts[version]), version=version)

    monkeypatch.setattr(flow, "run_on", run_on)
    result = flow.triage(_matrix(tmp_path), flow.TriageOptions(source="issue.md", text=text, **options),
                         lambda _m: None)
    assert ran == list(verdicts)  # the reporter's release first, then the newest; nothing else
    return result


def test_a_regression_with_a_release_that_worked_bisects_from_it_and_names_the_fix_too(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    result = _triage(tmp_path, monkeypatch, "jit-kwarg-named-f.md", {"0.4.36": "affected", "0.9.0": "unaffected"},
                     newest="0.9.0")
    assert result.answer == "reproduced on the reporter's release 0.4.36; fixed by the newest release, 0.9.0"
    assert result.bisect_argv[-4:] == ["--good", "0.4.35", "--bad", "0.4.36"]
    name = flow.check_name("issue.md")
    assert result.bisect_argv[:2] == ["--script", f"checks/{name}.py"]  # relative to the project, as printed
    assert result.other_command[-4:] == ["--good", "0.9.0", "--bad", "0.4.36"]
    lines = flow.answer_lines(result)
    # The two runs differ (an exception on 0.4.36, a value on 0.9.0): that difference is the check.
    assert lines[-2].startswith(f"   next: nox -s bisect -- --script checks/{name}.py --bad-if '{DIFFERENCE_BAD_IF}'")
    assert lines[-1].startswith("   and what fixed it: nox -s bisect -- ")
    assert "print(jax.jit(loss)(params, f=2.0))" in (tmp_path / "checks" / f"{name}.py").read_text()
    assert "   differs: exception: TypeError: result_paths() got multiple values for argument 'f' on 0.4.36, no " \
           "exception on 0.9.0" in lines


def test_fixed_on_the_newest_without_a_good_release_bisects_the_fix(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    result = _triage(tmp_path, monkeypatch, "jit-kwarg-named-f.md", {"0.4.36": "affected", "0.9.0": "unaffected"},
                     newest="0.9.0", good="", reported="0.4.36")
    assert result.bisect_argv[-4:] == ["--good", "0.4.35", "--bad", "0.4.36"]  # the report's own good release
    text = "```python\nimport jax\nprint(jax.numpy.ones(2))\n```\nFails with jax 0.4.36:\n```\nValueError: x\n```"
    fix = _triage(tmp_path, monkeypatch, text, {"0.4.36": "affected", "0.9.0": "unaffected"}, newest="0.9.0")
    assert fix.bisect_argv[-4:] == ["--good", "0.9.0", "--bad", "0.4.36"]
    assert fix.other_command == []


def test_still_there_without_a_good_release_gallops_back_from_the_newest(tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    text = "```python\nimport jax\nprint(jax.numpy.ones(2))\n```\nFails with jax 0.6.1:\n```\nValueError: x\n```"
    result = _triage(tmp_path, monkeypatch, text, {"0.6.1": "affected", "0.9.0": "affected"}, newest="0.9.0")
    # --bad alone, at the newest: the bisect's gallop goes back from there to find a release that worked.
    assert result.bisect_argv[-2:] == ["--bad", "0.9.0"]
    assert "--good" not in result.bisect_argv
    assert result.answer.endswith("still there in the newest release, 0.9.0; the bisect looks for a release where "
                                  "it worked, going back from the newest")
    # Given a release that worked, it is run too (the first two behaved the same): its difference is the check.
    given = _triage(tmp_path, monkeypatch, text, {"0.6.1": "affected", "0.9.0": "affected", "0.6.0": "unaffected"},
                    newest="0.9.0", good="0.6.0")
    assert given.check.bad_if == DIFFERENCE_BAD_IF
    assert given.bisect_argv[-4:] == ["--good", "0.6.0", "--bad", "0.6.1"]


def test_not_reproduced_where_reported_proposes_no_bisect(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    result = _triage(tmp_path, monkeypatch, "shapedtypestruct-immutable.md",
                     {"0.6.1": "inconclusive", "0.9.0": "affected"}, newest="0.9.0")
    assert result.bisect_argv == []
    assert (result.answer.startswith("not reproduced on the reporter's release 0.6.1 "
                                                                 "(inconclusive)"))


def test_with_commits_the_bisect_goes_on_to_the_commit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    result = _triage(tmp_path, monkeypatch, "shapedtypestruct-immutable.md",
                     {"0.6.1": "affected", "0.9.0": "affected", "0.6.0": "unaffected"}, newest="0.9.0", commits=True,
                     jax_repo=Path("/src/jax"))
    # A clone outside the project and home is kept as given: a printed command must run (issue 58; it printed
    # '<a clone of jax-ml/jax>', which --commits refuses).
    assert result.bisect_argv[-7:] == ["--good", "0.6.0", "--bad", "0.6.1", "--commits", "--jax-repo", "/src/jax"]


def test_the_newest_release_falls_back_to_matrix_toml_when_the_index_is_out_of_reach(tmp_path: Path) -> None:
    said: list[str] = []
    assert flow.newest_release(_matrix(tmp_path), None, said.append) == "0.6.2"
    assert said[0].endswith("comparing with matrix.toml's newest release, 0.6.2, instead")


def _refused_proxy() -> str:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{sock.getsockname()[1]}"


def test_the_command_with_github_out_of_reach_is_exit_4_in_one_sentence(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("HTTPS_PROXY", _refused_proxy())  # how users and tests cut the network (kit/http.py)
    monkeypatch.setenv("https_proxy", _refused_proxy())
    (tmp_path / "matrix.toml").write_text(MATRIX_TOML)
    code = cli.main(["triage", "--issue", "jax-ml/jax#25329", "--yes"], matrix_path=str(tmp_path / "matrix.toml"))
    err = capsys.readouterr().err.splitlines()
    assert code == exit_codes.EXIT_NETWORK
    assert err[0].startswith("ERROR: GitHub's API could not be reached to read jax-ml/jax#25329 (")
    assert err[1].startswith("TIP: open https://github.com/jax-ml/jax/issues/25329, save its text as a file")


@pytest.mark.parametrize(("argv", "message"), [
    (["triage"], "ERROR: triage needs one report: a file, or --issue OWNER/REPO#N"),
    (["triage", "nosuch.md"], "ERROR: the report nosuch.md does not exist"),
    (["triage", "x.md", "--good", "v0.4"], "ERROR: --good 'v0.4' is not a plain JAX release number"),
])
def test_bad_input_is_one_error_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                     capsys: pytest.CaptureFixture[str], argv: list[str], message: str) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "matrix.toml").write_text(MATRIX_TOML)
    (tmp_path / "x.md").write_text("```python\nimport jax\n```\n")
    assert cli.main(argv, matrix_path=str(tmp_path / "matrix.toml")) == exit_codes.EXIT_USAGE
    assert capsys.readouterr().err.splitlines()[0] == message


def test_run_hands_the_bisect_its_arguments_with_the_checks_whole_path(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    import kit.bisect

    text = (ISSUES / "shapedtypestruct-immutable.md").read_text()
    monkeypatch.setattr(flow, "run_on", lambda *a: dataclasses.replace(stood_in(text, "affected"), version=a[4]))
    monkeypatch.setattr(flow, "newest_release", lambda *a: "0.9.0")
    handed: list[list[str]] = []
    monkeypatch.setattr(kit.bisect, "main", lambda matrix, argv, log, runs: handed.append(list(argv)) or 0)
    (tmp_path / "matrix.toml").write_text(MATRIX_TOML)
    report = tmp_path / "r.md"
    report.write_text((ISSUES / "shapedtypestruct-immutable.md").read_text())
    assert cli.main(["triage", str(report), "--run"], matrix_path=str(tmp_path / "matrix.toml")) == 0
    name = flow.check_name("r.md", str(report.resolve()))
    assert handed == [["--script", str(tmp_path / "checks" / f"{name}.py"), "--bad-if", handed[0][3],
                       "--good", "0.6.0", "--bad", "0.6.1"]]
    assert f"next: nox -s bisect -- --script checks/{name}.py" in capsys.readouterr().out


def test_the_answer_names_the_catalogue_entry_the_difference_matches_and_none_without_a_difference(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fixtures = Path(__file__).resolve().parent / "fixtures" / "known"  # a fixed catalogue, not the shipped one
    monkeypatch.setattr(flow, "catalogue_folders", lambda matrix: [fixtures])
    result = _triage(tmp_path, monkeypatch, "jit-kwarg-named-f.md", {"0.4.36": "affected", "0.9.0": "unaffected"},
                     newest="0.9.0")
    [named] = [line for line in flow.answer_lines(result) if "known problem" in line]
    assert named.startswith("   known problem jit-argument-named-f (matches all 2 parts: exception TypeError, "
                            "message /got multiple values for argument 'f'/): measured cpu: present in 0.4.36")
    text = ("```python\nimport jax\nprint(jax.numpy.ones(2))\n```\nFails with jax 0.4.36:\n```\n"
            "TypeError: f() got multiple values for argument 'f'\n```")
    same = _triage(tmp_path, monkeypatch, text, {"0.4.36": "affected", "0.9.0": "affected"}, newest="0.9.0")
    assert same.judged is None and not any("known problem" in line for line in flow.answer_lines(same))
