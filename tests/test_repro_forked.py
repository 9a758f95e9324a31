"""repro/forked.py, the fork-and-wait both warm interpreters share, and repro/reduce_worker.py on top of it: run
with this interpreter and a stand-in ``jax`` module (the worker only imports it), so nothing here needs JAX."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from repro import forked

ROOT = Path(__file__).resolve().parent.parent


def _run(tmp_path: Path, body: str, timeout: float = 30.0) -> tuple[int | None, str]:
    script = tmp_path / "prog.py"
    script.write_text(body, encoding="utf-8")
    with tempfile.TemporaryFile(mode="w+") as output:
        code = forked.wait(forked.spawn(lambda: forked.as_main(str(script)), output.fileno(), output.fileno()),
                           timeout)
        output.seek(0)
        return code, output.read()


@pytest.mark.parametrize(("body", "code"), [("print('hi')\n", 0), ("import sys\nsys.exit(3)\n", 3),
                                            ("import sys\nsys.exit('no')\n", 1), ("raise ValueError('bad')\n", 1)])
def test_a_script_ends_with_the_status_python_gives_it(tmp_path: Path, body: str, code: int) -> None:
    assert _run(tmp_path, body)[0] == code


def test_the_traceback_starts_at_the_scripts_own_frame(tmp_path: Path) -> None:
    code, said = _run(tmp_path, "def f():\n    raise KeyError('k')\nf()\n")
    assert code == 1 and "KeyError: 'k'" in said and "runpy" not in said


def test_a_script_past_its_time_is_killed_with_what_it_started(tmp_path: Path) -> None:
    started = time.monotonic()
    code, _ = _run(tmp_path, "import subprocess, sys, time\nsubprocess.Popen([sys.executable, '-c', "
                             "'import time; time.sleep(60)'])\ntime.sleep(60)\n", timeout=1.0)
    assert code is None and time.monotonic() - started < 20


def _worker(tmp_path: Path) -> subprocess.Popen[str]:
    fake = tmp_path / "fake"
    fake.mkdir()
    (fake / "jax.py").write_text("__version__ = '0.0.0'\n", encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(fake)])}
    env.pop("KIT_COMPILE_CACHE", None)
    worker = subprocess.Popen([sys.executable, "-m", "repro.reduce_worker"], cwd=ROOT, env=env, text=True,
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert worker.stdout is not None
    assert json.loads(worker.stdout.readline())["ready"] is True
    return worker


def _ask(worker: subprocess.Popen[str], folder: Path, body: str, timeout: float = 30) -> dict[str, object]:
    assert worker.stdin is not None and worker.stdout is not None
    folder.mkdir()
    script = folder / "cand.py"
    script.write_text(body, encoding="utf-8")
    worker.stdin.write(json.dumps({"script": str(script), "folder": str(folder), "timeout": timeout,
                                   "env": {"CANDIDATE_SETTING": "on"}}) + "\n")
    worker.stdin.flush()
    answer: dict[str, object] = json.loads(worker.stdout.readline())
    return answer


def test_the_reduce_worker_runs_each_candidate_in_a_fork_and_keeps_what_it_did(tmp_path: Path) -> None:
    worker = _worker(tmp_path)
    try:
        ok = _ask(worker, tmp_path / "a", "import os, sys\nprint('out', os.environ['CANDIDATE_SETTING'], sys.argv)\n"
                                          "print('err', file=sys.stderr)\n")
        assert ok["exit"] == 0 and ok["timed_out"] is False
        assert (tmp_path / "a" / "stdout.txt").read_text() == f"out on ['{tmp_path / 'a' / 'cand.py'}']\n"
        assert (tmp_path / "a" / "stderr.txt").read_text() == "err\n"
        failed = _ask(worker, tmp_path / "b", "raise TypeError('lax.clamp requires 3 args')\n")
        assert failed["exit"] == 1
        assert json.loads((tmp_path / "b" / "raised.json").read_text()) == {
            "type": "TypeError", "text": "lax.clamp requires 3 args"}
        late = _ask(worker, tmp_path / "c", "import time\ntime.sleep(60)\n", timeout=1)
        assert late["exit"] is None and late["timed_out"] is True
        again = _ask(worker, tmp_path / "d", "import os\nassert 'CANDIDATE_SETTING' in os.environ\n")
        assert again["exit"] == 0  # the worker itself lives on
    finally:
        assert worker.stdin is not None
        worker.stdin.close()
        worker.wait(timeout=30)
        assert worker.stdout is not None
        worker.stdout.close()
