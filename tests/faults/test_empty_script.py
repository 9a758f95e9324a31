"""A check script without a statement (empty, blank, comments alone) is refused where it enters, exit 2.

Such a script exits 0 on every release, so every release read "unaffected":
an empty file saved by mistake cleared a whole matrix, or made a bisect's
bounds look inverted, without a word. A script that is not text or does not
parse is left to the run, which says so (inconclusive). docs/faults.md,
"Inputs".
"""

from __future__ import annotations

from pathlib import Path

import pytest

from kit import cli, exit_codes
from kit.user_paths import script_with_code


def matrix(folder: Path, body: str) -> str:
    (folder / "mine.py").write_text(body, encoding="utf-8")
    path = folder / "matrix.toml"
    # An index nothing answers on: whatever happens, nothing goes further than this machine.
    path.write_text('[kit]\nresults_dir = "results"\n[install]\nindex_url = "http://127.0.0.1:9/simple"\n'
                    '[[release]]\nversion = "0.6.0"\n[checks.scaling]\n[checks.mine]\nscript = "mine.py"\n',
                    encoding="utf-8")
    return str(path)


@pytest.mark.parametrize("body", ["", "\n\n  \n", "# TODO: the repro\n# import jax\n"], ids=["empty", "blank", "comments"])
def test_a_script_check_without_a_statement_is_refused_at_load(tmp_path: Path, body: str,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    code = cli.main(["run", "mine", "0.6.0"], matrix_path=matrix(tmp_path, body))
    assert code == exit_codes.EXIT_USAGE
    assert capsys.readouterr().err.splitlines()[0] == (
        f"ERROR: script {tmp_path / 'mine.py'} holds no Python statement (it is empty, or comments alone): it would "
        "exit 0 on every release, and every release would read unaffected")
    assert not (tmp_path / "results").exists()


def test_bisects_script_is_refused_the_same(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = matrix(tmp_path, "import jax\n")
    (tmp_path / "empty.py").write_text("")
    code = cli.main(["bisect", "--script", str(tmp_path / "empty.py"), "--good", "0.6.0", "--bad", "0.5.0"],
                    matrix_path=path)
    assert code == exit_codes.EXIT_USAGE
    assert "holds no Python statement" in capsys.readouterr().err.splitlines()[0]


@pytest.mark.parametrize("body", [b"import jax\n", b"\xff\xfe not text", b"def broken(:\n"], ids=["code", "binary", "syntax"])
def test_a_script_with_anything_in_it_is_left_to_the_run(tmp_path: Path, body: bytes) -> None:
    script = tmp_path / "mine.py"
    script.write_bytes(body)
    assert script_with_code(script) == script.resolve()
