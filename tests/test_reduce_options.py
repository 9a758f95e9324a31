"""``reduce``'s command line: each mistake one sentence and a tip (exit 2), before anything is built or run."""

from __future__ import annotations

from pathlib import Path

import pytest

from kit.config import load_matrix
from kit.errors import UsageError
from kit.reduce.options import parse

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def program(tmp_path: Path) -> Path:
    path = tmp_path / "train.py"
    path.write_text("import jax\nprint(jax.numpy.ones(3))\n")
    return path


def options(*argv: str, cwd: Path) -> object:
    return parse(load_matrix(ROOT / "matrix.toml"), list(argv), cwd=cwd)


def test_a_whole_command_line_reads(program: Path) -> None:
    read = options("train.py", "--bad", "0.4.35", "--good", "0.5.3", "--out", "min", "--op", "train.py:2",
                   cwd=program.parent)
    assert read.op_line == 2 and read.devices == 4 and read.out == program.parent / "min"  # type: ignore[attr-defined]


@pytest.mark.parametrize("argv, said", [
    ([], "reduce needs a program"),
    (["missing.py", "--bad", "0.4.35", "--good", "0.5.3", "--out", "o"], "missing.py"),
    (["train.py", "--good", "0.5.3", "--out", "o"], "reduce needs --bad"),
    (["train.py", "--bad", "0.4.35", "--good", "0.4.35", "--out", "o"], "the same release"),
    (["train.py", "--bad", "latest", "--good", "0.5.3", "--out", "o"], "not a plain JAX release number"),
    (["train.py", "--bad", "0.4.35", "--good", "0.5.3", "--out", "o", "--op", "other.py:2"], "another file"),
    (["train.py", "--bad", "0.4.35", "--good", "0.5.3", "--out", "o", "--op", "train.py:99"], "has 2 lines"),
    (["train.py", "--bad", "0.4.35", "--good", "0.5.3", "--out", "o", "--jobs", "0"], "1 or more"),
    (["train.py", "--bad", "0.4.35", "--good", "0.5.3", "--out", "o", "--target", "tpu:v5e:2x2"],
     r"reduce does not take --target \(tpu:v5e:2x2\)"),
])
def test_each_mistake_is_one_sentence(program: Path, argv: list[str], said: str) -> None:
    with pytest.raises(UsageError, match=said) as raised:
        options(*argv, cwd=program.parent)
    assert raised.value.exit_code == 2


def test_a_program_python_cannot_read_is_refused(tmp_path: Path) -> None:
    (tmp_path / "broken.py").write_text("def f(:\n")
    with pytest.raises(UsageError, match="not Python the kit can read"):
        options("broken.py", "--bad", "0.4.35", "--good", "0.5.3", "--out", "o", cwd=tmp_path)
