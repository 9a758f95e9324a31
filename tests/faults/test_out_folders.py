"""``--out`` naming what cannot hold records, and a folder that refuses explain's tables after the answer is known.

Was: `jax-kit --out FILE explain ...` and `--out /proc/1` ended in a traceback
(FileExistsError, FileNotFoundError) once the program had run, and the answer
it computed was never printed.
"""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from kit import explain
from kit.config import load_matrix
from kit.errors import StorageError
from tests.faults.explained_runs import DATA, this_python

ROOT = Path(__file__).resolve().parents[2]


def _jax_kit(folder: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", "import sys; from kit.cli import main; sys.exit(main(project=True))",
                           *argv], cwd=folder, capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": str(ROOT), "JAX_KIT_CACHE": str(folder / "cache")})


@pytest.mark.parametrize(("out", "said"), [
    ("notes.txt", "ERROR: --out '{here}/notes.txt' is a file, not a folder"),
    ("notes.txt/reports", "ERROR: --out '{here}/notes.txt/reports' cannot be made ('{here}/notes.txt', a part of it, "
                          "is a file, not a folder)"),
    ("/proc/1", "ERROR: --out '/proc/1' cannot be written: no file can be made there (No such file or directory)"),
])
def test_an_out_that_cannot_hold_records_is_refused_before_anything_runs(tmp_path: Path, out: str, said: str) -> None:
    if out.startswith("/proc") and not os.path.isdir("/proc/1"):
        pytest.skip("needs Linux's /proc")
    (tmp_path / "notes.txt").write_text("mine\n")
    (tmp_path / "train.py").write_text("print('ran')\n")
    proc = _jax_kit(tmp_path, "--out", out, "explain", "train.py")
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.splitlines() == [said.format(here=tmp_path),
                                        "TIP: name a folder you can write (it is made when it is not there yet)"]
    assert "Traceback" not in proc.stderr and "ran" not in proc.stdout
    assert (tmp_path / "notes.txt").read_text() == "mine\n"


def test_an_out_folder_not_there_yet_is_made(tmp_path: Path) -> None:
    proc = _jax_kit(tmp_path, "--out", "new/reports", "report")
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "new" / "reports" / "matrix.md").is_file()
    assert not [p for p in (tmp_path / "new" / "reports").iterdir() if p.name.startswith(".kit-probe")]


def test_explain_prints_its_answer_before_a_folder_refuses_the_tables(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    this_python(monkeypatch)
    (tmp_path / "train.py").write_text(textwrap.dedent(f'''
        import os, re, shutil
        folder = re.search(r"--xla_dump_to=(\\S+)", os.environ["XLA_FLAGS"]).group(1)
        os.makedirs(folder, exist_ok=True)
        for stage, name in (("before_optimizations", "before_optimizations"),
                            ("after_optimizations", "cpu_after_optimizations")):
            shutil.copy(f"{DATA}/jax-0.6.0-train_slogdet.{{stage}}.txt", f"{{folder}}/module_0037.jit_loss.{{name}}.txt")
    '''))
    (tmp_path / "reports").write_text("a file where the tables go\n")
    matrix = dataclasses.replace(load_matrix(ROOT / "matrix.toml"), results_dir=tmp_path / "reports" / "results")
    with pytest.raises(StorageError) as refused:
        explain.main(matrix, ["--called-from", str(tmp_path), "train.py", "--releases", "0.6.0"], log=lambda _: None)
    out = capsys.readouterr().out
    assert "answer: every op is split on 0.6.0" in out  # was: never printed (a traceback instead)
    assert refused.value.exit_code == 1
    assert "the answer printed above is all there is of this run" in refused.value.render()
