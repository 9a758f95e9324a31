"""kit/run/jax_runs.py: does JAX itself import and compute here, and if not, what did it die of, in one line.

A fake ``jax`` package on the environment's extra path stands in for a release's JAX (tests/fake_jax_package.py);
the interpreter, the smoke program and the way the answer is read are the module's own.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from kit.install.environment import REUSED, Environment
from kit.run.jax_runs import JaxRuns, extension_version, jax_runs
from tests.fake_jax_package import write_fake_jax
from tests.real_releases import release_python


def _env(*pythonpath: Path, python: Path = Path(sys.executable)) -> Environment:
    return Environment(python=python, versions={}, obtained=REUSED, pythonpath=pythonpath)


def _jax(tmp_path: Path, init: str) -> Path:
    """A jax package whose __init__ is ``init`` (and the fake's jax.numpy)."""
    folder = write_fake_jax(tmp_path / "site")
    (folder / "jax" / "__init__.py").write_text(init)
    return folder


def test_the_fake_jax_runs(tmp_path: Path) -> None:
    answer = jax_runs(_env(write_fake_jax(tmp_path / "site")))
    assert answer.ok
    assert answer.error == ""
    assert answer.output_tail == ()
    assert answer.sentence() == "JAX imports and runs here"


def test_a_wrong_value_is_not_a_run(tmp_path: Path) -> None:
    # Guards against counting the mark alone: a JAX that computes 1+2+3 wrong has not run correctly.
    folder = _jax(tmp_path, '__version__ = "0.6.0"\n')
    (folder / "jax" / "numpy.py").write_text("class A(list):\n    def __add__(self, o): return A(x for x in self)\n"
                                             "    def sum(self): return sum(self)\n"
                                             "def arange(n): return A(range(n))\n")
    answer = jax_runs(_env(folder))
    assert not answer.ok
    assert answer.error == "import jax exited 0: KIT_JAX_RAN 0.6.0 3"


def test_an_import_error_is_named_by_its_headline(tmp_path: Path) -> None:
    answer = jax_runs(_env(write_fake_jax(tmp_path / "site", broken=True)))
    assert not answer.ok
    assert answer.error == "ImportError: cannot import name '_jax' from 'jaxlib'"
    assert answer.sentence() == "JAX itself cannot run here: ImportError: cannot import name '_jax' from 'jaxlib'"
    assert answer.output_tail[-1] == answer.error  # the traceback's end is kept for the record


def test_no_jax_at_all_is_a_module_not_found(tmp_path: Path) -> None:
    answer = jax_runs(_env(tmp_path / "empty"))
    assert answer.error == "ModuleNotFoundError: No module named 'jax'"


def test_a_jax_killed_by_a_signal_says_so(tmp_path: Path) -> None:
    answer = jax_runs(_env(_jax(tmp_path, "import os, signal\nos.kill(os.getpid(), signal.SIGKILL)\n")))
    assert answer.error == "import jax was killed by signal 9"


def test_an_exit_without_a_traceback_quotes_its_last_line_or_says_it_printed_nothing(tmp_path: Path) -> None:
    answer = jax_runs(_env(_jax(tmp_path, "print('no GPU found')\nprint('  ')\nraise SystemExit(4)\n")))
    assert answer.error == "import jax exited 4: no GPU found"
    silent = jax_runs(_env(_jax(tmp_path / "b", "raise SystemExit(4)\n")))
    assert silent.error == "import jax exited 4 and printed nothing"


@pytest.mark.real_time  # waits out a real time limit
def test_an_import_past_the_timeout_is_cut_off(tmp_path: Path) -> None:
    answer = jax_runs(_env(_jax(tmp_path, "import time\ntime.sleep(60)\n")), timeout=1)
    assert (answer.ok, answer.error) == (False, "import jax did not finish in 1 s")
    assert 1 <= answer.seconds < 30


def test_an_interpreter_that_cannot_start_is_an_answer_not_an_exception(tmp_path: Path) -> None:
    missing = tmp_path / "bin" / "python"
    answer = jax_runs(_env(python=missing))
    assert answer == JaxRuns(False, f"{missing} could not start: No such file or directory", (), answer.seconds)


def test_to_json_rounds_the_seconds_and_lists_the_tail() -> None:
    answer = JaxRuns(False, "E", ("a", "b"), 1.23456)
    assert answer.to_json() == {"ok": False, "error": "E", "output_tail": ["a", "b"], "seconds": 1.23}


def _fake_python(tmp_path: Path, body: str) -> Path:
    python = tmp_path / "python"
    python.write_text(f"#!{sys.executable}\n{body}\n")
    python.chmod(0o755)
    return python


def test_extension_version_reads_the_last_line_as_a_number(tmp_path: Path) -> None:
    assert extension_version(_env(python=_fake_python(tmp_path, "print('warning: old CPU')\nprint(316)"))) == 316


def test_extension_version_is_none_where_jaxlib_does_not_say(tmp_path: Path) -> None:
    # An empty _version, a non-number, a failed import, no output: none of them is a version.
    for body in ("print('')", "print('3.1')", "raise SystemExit(1)", "pass", "print(-5)"):
        assert extension_version(_env(python=_fake_python(tmp_path, body))) is None, body
    assert extension_version(_env(python=tmp_path / "missing")) is None


@pytest.mark.integration
def test_a_real_release_runs_and_names_its_extension_version() -> None:
    python = release_python("0.4.35")  # built here first where it is not
    assert python is not None
    env = _env(python=python)
    answer = jax_runs(env)
    assert answer.ok, answer.error
    version = extension_version(env)
    assert version == 293  # jaxlib 0.4.35's xla_extension_version
