"""kit.install.existing: what an existing interpreter has, read with repro/inventory.py, and every way it is not one."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pytest

from kit.errors import UsageError
from kit.install.existing import inspect_interpreter
from kit.records import packages_fingerprint
from tests.fake_interpreter import RELEASE, fake_interpreter


def test_packages_and_what_jax_reports_are_read_without_installing_anything(tmp_path: Path) -> None:
    python = fake_interpreter(tmp_path, RELEASE, backend="gpu", kind="NVIDIA H200", count=8)
    found = inspect_interpreter(python)
    assert found.python == python  # as given: a venv's python is a link, and resolving it would lose the venv
    assert dict(found.packages) == RELEASE
    assert found.python_version == ".".join(map(str, sys.version_info[:3]))
    assert (found.backend, found.device_kind, found.device_count, found.jax_problem) == ("gpu", "NVIDIA H200", 8, "")
    assert found.fingerprint == packages_fingerprint(RELEASE)
    assert found.report() == "JAX reports backend gpu, 8 device(s) (NVIDIA H200)"
    assert found.versions(("jax", "scipy", "optax")) == "jax 0.4.35, scipy 1.14.1, optax (absent)"


def test_distribution_names_are_read_in_their_normal_form(tmp_path: Path) -> None:
    found = inspect_interpreter(fake_interpreter(tmp_path, {"Jax_Cuda12.Plugin": "0.4.35"}))
    assert dict(found.packages) == {"jax-cuda12-plugin": "0.4.35"}


def test_a_jax_that_does_not_import_is_a_sentence(tmp_path: Path) -> None:
    broken = "raise ImportError('numpy.core.multiarray failed to import\\nmore lines')"
    found = inspect_interpreter(fake_interpreter(tmp_path, RELEASE, jax_source=broken))
    assert found.backend is None
    assert dict(found.packages) == RELEASE
    assert found.jax_problem == "ImportError: numpy.core.multiarray failed to import"
    assert found.report() == "JAX did not report a backend (ImportError: numpy.core.multiarray failed to import)"


def test_a_jax_that_kills_its_process_still_leaves_the_packages(tmp_path: Path) -> None:
    dies = "import os, signal\nos.kill(os.getpid(), signal.SIGKILL)\n"
    found = inspect_interpreter(fake_interpreter(tmp_path, RELEASE, jax_source=dies))
    assert dict(found.packages) == RELEASE
    assert found.backend is None
    assert "stopped before JAX answered (exit code -9" in found.jax_problem


@pytest.mark.real_time  # waits out a real time limit
def test_a_jax_that_hangs_stops_the_run_with_one_sentence(tmp_path: Path) -> None:
    """The check would hang the same way until its own timeout (1800 s): stop at the probe's limit instead."""
    hangs = "import time\ntime.sleep(60)\n"
    python = fake_interpreter(tmp_path, RELEASE, jax_source=hangs)
    started = time.monotonic()
    with pytest.raises(UsageError) as hung:
        inspect_interpreter(python, timeout_s=3)
    assert time.monotonic() - started < 30
    assert str(hung.value).startswith(f"{python}: import jax did not finish in 3 s")
    assert "-X importtime" in (hung.value.tip or "")


def test_an_interpreter_without_jax_says_so(tmp_path: Path) -> None:
    found = inspect_interpreter(fake_interpreter(tmp_path, {"numpy": "2.1.3"}))
    assert found.backend is None
    assert found.jax_problem == "ModuleNotFoundError: No module named 'jax'"


def _refused(python: Path) -> str:
    with pytest.raises(UsageError) as caught:
        inspect_interpreter(python)
    assert "\n" not in caught.value.message
    return caught.value.message


def test_a_path_that_does_not_exist_is_one_sentence(tmp_path: Path) -> None:
    assert _refused(tmp_path / "nope") == f"{tmp_path / 'nope'} does not exist"


def test_a_venv_folder_points_at_its_python(tmp_path: Path) -> None:
    python = fake_interpreter(tmp_path / "venv", {})
    with pytest.raises(UsageError, match="is a folder, not a Python interpreter") as caught:
        inspect_interpreter(tmp_path / "venv")
    assert caught.value.tip == f"did you mean {python}?"


def test_a_file_that_is_not_executable_is_one_sentence(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("hello")
    assert _refused(tmp_path / "notes.txt").endswith("is not executable, so it cannot be a Python interpreter")


@pytest.mark.parametrize("program", ["/bin/true", "/bin/false"])
def test_a_program_that_is_not_python_is_one_sentence(program: str) -> None:
    assert _refused(Path(program)).startswith(f"{program} did not answer as a Python interpreter")


def test_a_binary_that_cannot_be_started_is_one_sentence(tmp_path: Path) -> None:
    (tmp_path / "python").write_bytes(b"\x7fELF not really")
    (tmp_path / "python").chmod(0o755)
    assert _refused(tmp_path / "python").startswith(f"{tmp_path / 'python'} did not answer as a Python interpreter")


@pytest.mark.parametrize("version", ["2.7", "3.6"])
def test_a_python_too_old_for_the_checks_says_its_version(version: str) -> None:
    found = sorted((Path.home() / ".pyenv" / "versions").glob(f"{version}.*/bin/python"))
    if not found:
        pytest.skip(f"no Python {version} under pyenv here")
    assert _refused(found[0]).startswith(f"{found[0]} is Python {version}.")
    assert _refused(found[0]).endswith("the checks need Python 3.9 or newer")


def test_a_shell_script_given_as_python_is_refused_with_what_it_printed(tmp_path: Path) -> None:
    script = tmp_path / "python"
    script.write_text("#!/bin/sh\necho 'this is not python'\n")
    script.chmod(0o755)
    with pytest.raises(UsageError) as refused:
        inspect_interpreter(script)
    assert "this is not python" in str(refused.value)
    assert "printed nothing" not in str(refused.value)
