"""The kit speaks as the command the user typed, and answers --help on every command with exit 0.

The faults, met as a new user of the installed command: ``jax-kit run --help``
exited 2 (``run needs a check``), as did ``probe --help``; under ``jax-kit`` the
TIPs named ``python -m kit run scaling 0.6.0`` and ``nox -s explain``, which a
project folder does not have; ``--releases 9.9.9``'s TIP sent the user to a
list ``jax-kit --help`` does not show; and ``bisect --op bad`` ran two probes to
stop at "--bad 0.5.0 is skip, not bad". Now one wording module
(`kit.wording.as_spoken`) turns the kit's words into ``jax-kit``'s at the
console's edge while it runs, and --op is checked where it is parsed.
docs/faults.md, "Inputs".
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from kit import cli
from kit.exit_codes import EXIT_OK, EXIT_USAGE
from tests.fake_index import refused_url, serve_index

ROOT = Path(__file__).resolve().parents[2]
COMMANDS = [["run"], ["scaling"], ["scaling", "0.6.0"], ["plan"], ["report"], ["bisect"], ["matrix"], ["triage"],
            ["explain"], ["probe"], ["audit"], ["known"], []]
NOT_JAX_KITS = re.compile(r"nox -s (?!tests)|python -m kit")


def matrix_file(tmp_path: Path, index_url: str) -> str:
    """A matrix.toml of one release and scaling, its records and environments in ``tmp_path``."""
    path = tmp_path / "matrix.toml"
    path.write_text(f'[kit]\nresults_dir = "{tmp_path}/results"\nenvs_dir = "{tmp_path}/envs"\n'
                    f'[install]\nindex_url = "{index_url}"\n[[release]]\nversion = "0.6.0"\n[checks.scaling]\n',
                    encoding="utf-8")
    return str(path)


def exit_code(argv: list[str], **kwargs: object) -> object:
    """The command's exit status as the process would end with it (argparse's --help ends in SystemExit(0))."""
    try:
        return cli.main(argv, **kwargs)  # type: ignore[arg-type]
    except SystemExit as stopped:
        return stopped.code


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("JAX_KIT_CACHE", str(tmp_path / "cache"))
    return tmp_path


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: " ".join(c) or "(none)")
def test_help_on_every_command_exits_0_and_speaks_jax_kit(project: Path, command: list[str],
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    assert exit_code([*command, "--help"], project=True) == EXIT_OK  # was 2 for run and probe
    out, err = capsys.readouterr()
    assert out.strip() and not err
    assert not NOT_JAX_KITS.search(out), NOT_JAX_KITS.search(out)  # was: nox -s explain, python -m kit run


@pytest.mark.parametrize("command", [["run", *c] if c[:1] == ["scaling"] else c for c in COMMANDS if c],
                         ids=lambda c: " ".join(c))
def test_help_on_every_command_exits_0_in_the_repository(command: list[str],
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    assert exit_code([*command, "--help"], matrix_path=str(ROOT / "matrix.toml")) == EXIT_OK
    assert capsys.readouterr().out.strip()


def test_a_tip_under_jax_kit_names_jax_kits_commands(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["run"], project=True) == EXIT_USAGE
    err = capsys.readouterr().err
    assert err.splitlines() == [
        "ERROR: run needs a check",
        "TIP: e.g. jax-kit scaling 0.6.0 (a release), jax-kit scaling --python VENV/bin/python (your own "
        "installation, as it is) or jax-kit scaling NAME (an [[environment]] in matrix.toml)"]  # was: python -m kit run


def test_an_unknown_releases_tip_points_at_the_index_page(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with serve_index() as served:
        code = cli.main(["run", "scaling", "9.9.9"], log=lambda m: None, matrix_path=matrix_file(tmp_path, served.url))
    assert code == EXIT_USAGE
    assert capsys.readouterr().err.splitlines()[1] == (
        f"TIP: check the version number; the index lists every release it has at {served.url}/jax/")
    # was: "`nox -l` lists the releases in matrix.toml", under jax-kit "`jax-kit --help` lists ...", which it does not


@pytest.mark.parametrize("op", ["bad", "train.py", "train.py:x", "train.py:0", ":37", "train.py:37:"])
def test_a_malformed_op_is_named_as_the_op(op: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    program = tmp_path / "train.py"
    program.write_text("import jax\n")
    argv = ["bisect", "--explain", str(program), "--op", op, "--good", "0.6.0", "--bad", "0.5.0"]
    # A matrix of its own, records in tmp_path, the index out of reach: nothing of the repository's is written.
    assert cli.main(argv, log=lambda m: None, matrix_path=matrix_file(tmp_path, refused_url())) == EXIT_USAGE
    assert capsys.readouterr().err.splitlines()[0] == (
        "ERROR: argument --op: must be FILE:LINE or FILE:LINE:OP, a line of the program as explain names it "
        f"(train.py:37, train.py:37:lu), got {op!r}")  # was: two probes, then "--bad 0.5.0 is skip, not bad"


@pytest.mark.parametrize("made", [".venv/bin/python", "checks/mine.py"])
def test_what_readme_tells_a_user_to_make_in_a_clone_is_ignored_by_git(made: str) -> None:
    import shutil
    import subprocess

    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    assert subprocess.run(["git", "-C", str(ROOT), "check-ignore", "-q", made]).returncode == 0
    assert subprocess.run(["git", "-C", str(ROOT), "check-ignore", "-q", "tests/fixtures/checks/new.py"]).returncode == 1


@pytest.mark.parametrize(("argv", "near"), [(["scaling", "0.6.0", "--devcies", "4"], "--devices"),
                                            (["triage", "--tmeout", "5", "x.md"], "--timeout"),
                                            (["bisect", "--chek", "scaling", "--bad", "0.6.0"], "--check"),
                                            (["report", "--no-polts"], "--no-plots")],
                         ids=lambda a: " ".join(a) if isinstance(a, list) else a)
def test_an_unknown_option_is_refused_with_the_nearest_name(argv: list[str], near: str, project: Path,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    assert exit_code(argv, project=True) == EXIT_USAGE
    first = capsys.readouterr().err.splitlines()[0]
    assert first.startswith("ERROR: unrecognized arguments: --") and first.endswith(f"; did you mean {near}?")
    # was: "unrecognized arguments: --tmeout 5 x.md" and nothing of --timeout
