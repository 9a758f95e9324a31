"""A user's own installation, made by hand outside the kit, run for real (slow; needs uv's cache or the index).

One venv made as a user makes it (``uv venv`` + ``uv pip install "jax[cpu]==0.4.35"``
with numpy and scipy of its era), from the wheels the kit's own build of 0.4.35
left in uv's cache where they are there, so CI downloads nothing new. It must give
the verdict the kit's own build gives; the same without scipy must say so in one
sentence; as an ``[[environment]]`` it must get its sessions and its row, with the
network cut, and leave the answer as it was.
"""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from kit import cli
from kit.config import Matrix, load_matrix
from kit.install.environment import ExistingPython
from kit.install.envs import find_interpreter
from kit.install.plan import find_uv
from kit.run.runner import RunRequest, run_check

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parent.parent

SMALL_SCALING = {"devices": [1, 2, 4], "batch": 1024, "repeats": 3, "warmup": 1, "modes": ["jit"],
                 "passes": ["forward"]}
NETWORK_CUT = {"HTTPS_PROXY": "http://127.0.0.1:9", "https_proxy": "http://127.0.0.1:9",
               "HTTP_PROXY": "http://127.0.0.1:9", "http_proxy": "http://127.0.0.1:9"}


def _hand_made_venv(folder: Path, packages: list[str], *, no_deps: bool = False) -> Path:
    """``uv venv`` + ``uv pip install``, as a user would: from uv's cache first, the index if it lacks a wheel."""
    base = find_interpreter("3.13")
    if base is None:
        pytest.skip("no Python 3.13 here for the hand-made venv")
    uv = find_uv()
    subprocess.run([uv, "venv", "--quiet", "--python", str(base), str(folder)], check=True)
    python = folder / "bin" / "python"
    command = [uv, "pip", "install", "--quiet", "--python", str(python), *(["--no-deps"] if no_deps else []), *packages]
    for cached in (["--offline"], []):
        done = subprocess.run([*command, *cached], capture_output=True, text=True)
        if done.returncode == 0:
            return python
    pytest.fail(f"could not make the venv by hand: {done.stderr[-1000:]}")


@pytest.fixture(scope="module")
def hand_made(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _hand_made_venv(tmp_path_factory.mktemp("hand-made") / "venv", ["jax[cpu]==0.4.35", "numpy<2.2", "scipy<1.15"])


@pytest.fixture(scope="module")
def matrix(tmp_path_factory: pytest.TempPathFactory) -> Matrix:
    # Records go to a scratch folder; the kit's environments are shared with the sessions.
    return dataclasses.replace(load_matrix(ROOT / "matrix.toml"), results_dir=tmp_path_factory.mktemp("results"))


def _run(matrix: Matrix, request: RunRequest) -> dict[str, Any]:
    record, path = run_check(matrix, request, log=lambda m: print(m, file=sys.stderr))
    assert json.loads(path.read_text()) == record
    return record


def test_a_hand_made_venv_gives_the_verdict_of_the_kit_s_own_build(matrix: Matrix, hand_made: Path) -> None:
    built = _run(matrix, RunRequest("scaling", "0.4.35", overrides=SMALL_SCALING))
    mine = _run(matrix, RunRequest("scaling", "", overrides=SMALL_SCALING, existing=ExistingPython(hand_made)))
    assert built["status"] == mine["status"] == "ran", (built["reason"], mine["reason"])
    assert built["verdict"] == mine["verdict"] == "affected"
    for figure in ("all_gathers", "lu_batch_per_device", "global_batch", "lu_fed_by", "positive_control_ok"):
        assert mine["evidence"]["summary"][figure] == built["evidence"]["summary"][figure], figure
    # Never confused: the record names the release it found and where it found it.
    assert mine["requested"]["jax"] == mine["environment"]["jax"] == "0.4.35"
    assert mine["install"]["environment"] == "existing"
    assert mine["install"]["interpreter"] == str(hand_made)
    assert mine["install"]["packages"]["jaxlib"] == "0.4.35"
    assert len(mine["install"]["packages_fingerprint"]) == 16
    assert built["install"]["environment"] in ("built", "reused")


def test_a_venv_without_scipy_is_one_sentence(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    python = _hand_made_venv(tmp_path / "venv", ["jax==0.4.35", "jaxlib==0.4.35", "numpy<2.2", "ml-dtypes",
                                                 "opt-einsum"], no_deps=True)
    toml = tmp_path / "matrix.toml"
    toml.write_text((ROOT / "matrix.toml").read_text().replace('results_dir = "reports/results"',
                                                               f'results_dir = "{tmp_path / "results"}"'))
    code = cli.main(["run", "correctness", "--python", str(python)], log=lambda m: None, matrix_path=str(toml))
    out, err = capsys.readouterr()
    assert code == 0
    assert "Traceback" not in out + err
    assert f"   {python} has no scipy installed (jax 0.4.35, jaxlib 0.4.35, numpy " in out
    assert "== correctness · jax 0.4.35 · cpu · existing interpreter: INCONCLUSIVE" in out


def _checkout_copy(tmp_path: Path) -> Path:
    """This checkout's files and its committed records, as a fresh clone has them."""
    listed = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, check=True, capture_output=True, text=True).stdout
    copy = tmp_path / "checkout"
    for name in filter(None, listed.split("\0")):
        if (ROOT / name).is_file() and not name.startswith("reports/plots/"):
            (copy / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, copy / name)
    return copy


def _nox(copy: Path, *args: str, env: dict[str, str] | None = None) -> str:
    done = subprocess.run([sys.executable, "-m", "nox", *args], cwd=copy, capture_output=True, text=True,
                          env={**os.environ, **(env or {})}, timeout=900)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:]
    return done.stdout + done.stderr


def _answer(copy: Path) -> str:
    return (copy / "reports" / "matrix.md").read_text().split("## Answer", 1)[1].split("## Matrix", 1)[0]


def test_a_named_environment_gets_its_sessions_and_row_offline_and_keeps_the_answer(tmp_path: Path,
                                                                                   hand_made: Path) -> None:
    copy = _checkout_copy(tmp_path)
    _nox(copy, "-s", "report", "--", "--no-plots")
    before = _answer(copy)
    with (copy / "matrix.toml").open("a", encoding="utf-8") as toml:
        toml.write(f'\n[[environment]]\nname = "mine"\npython = "{hand_made}"\nnote = "made by hand"\n')
    listed = _nox(copy, "-l")
    assert "scaling-mine" in listed
    assert "correctness-mine" in listed
    ran = _nox(copy, "-s", "scaling-mine", env=NETWORK_CUT)  # matrix.toml's own parameters: it counts for its row
    assert "used as it is (nothing is resolved or installed, no index is asked)" in ran
    assert "== scaling · jax 0.4.35 · cpu · environment mine: AFFECTED" in ran
    _nox(copy, "-s", "report", "--", "--no-plots")
    assert _answer(copy) == before
    md = (copy / "reports" / "matrix.md").read_text()
    assert "| **mine** (your environment: jax 0.4.35, jaxlib 0.4.35, numpy 2.1.3, scipy 1.14.1) | cpu |" in md
