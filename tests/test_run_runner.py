"""kit.run.runner: parameters, flags, one record per run whatever happens, and a repro that overruns is stopped."""

from __future__ import annotations

import dataclasses
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import pytest

from kit.install.bytecode import PYCACHE
from kit.install.environment import REUSED, Environment, ExistingPython, Prepared
from kit import records
from kit.run import runner, script_runs
from kit.config import Matrix, parse_matrix
from kit.errors import UsageError
from kit.install.plan import InstallPlan, Resolution
from tests.fake_index import refused_url
from tests.fake_interpreter import RELEASE, fake_interpreter
from tests.metadata_index import TableIndex


@pytest.fixture
def matrix(tmp_path: Path) -> Matrix:
    return parse_matrix({
        "kit": {"results_dir": str(tmp_path / "results"), "envs_dir": str(tmp_path / "envs")},
        "release": [{"version": "0.4.16"}],
        "checks": {"scaling": {"devices": [1, 2], "repeats": 5, "presets": {"quick": {"repeats": 1}}}},
    }, tmp_path / "matrix.toml")


def test_parameters_are_matrix_then_preset_then_command_line(matrix: Matrix) -> None:
    request = runner.RunRequest("scaling", "0.4.16", preset="quick", overrides={"devices": [1]})
    params = runner.parameters_for(matrix, request)
    assert params["devices"] == [1]
    assert params["repeats"] == 1


def test_an_unknown_preset_names_the_known_ones(matrix: Matrix) -> None:
    with pytest.raises(UsageError, match="scaling has no preset 'slow'"):
        runner.parameters_for(matrix, runner.RunRequest("scaling", "0.4.16", preset="slow"))


def test_a_release_without_wheels_gets_a_not_installable_record(matrix: Matrix) -> None:
    plan = InstallPlan(jax="0.4.16", backend="cpu", requirements=("jax[cpu]==0.4.16", "scipy"), exclude_newer=None,
                       index_url="https://example.invalid/simple", pythons=("3.11",))
    attempt = Resolution("3.11", ok=False, error="no version of jaxlib==0.4.16")
    prepared = Prepared(plan, None, None, "no jaxlib 0.4.16 wheels", [attempt])
    record, path = runner.run_check(matrix, runner.RunRequest("scaling", "0.4.16"), lambda m: None,
                                    TableIndex(neighbours=["0.4.13", "0.4.18"]), prepared)  # type: ignore[arg-type]
    assert path.parent == matrix.results_dir
    assert records.load_records(matrix.results_dir).records[0]["status"] == "not-installable"
    assert record["install"]["neighbours"] == ["0.4.13", "0.4.18"]
    assert record["install"]["resolver_error"] == "no version of jaxlib==0.4.16"
    assert "--find-links" in record["install"]["how_to_supply"]


def test_an_extra_package_of_no_release_of_the_era_says_what_to_do_about_it(matrix: Matrix) -> None:
    plan = InstallPlan(jax="0.4.16", backend="cpu", requirements=("jax[cpu]==0.4.16", "scipy", "flax>=0.10"),
                       exclude_newer="2023-10-18T00:00:00Z", index_url="https://example.invalid/simple",
                       pythons=("3.11",), requires=("flax>=0.10",))
    attempt = Resolution("3.11", ok=False, error="Because only flax<=0.7.4 is available and you require flax>=0.10")
    prepared = Prepared(plan, None, None, "the check requires flax>=0.10, and ...", [attempt])
    record, _path = runner.run_check(matrix, runner.RunRequest("scaling", "0.4.16"), lambda m: None,
                                     TableIndex(neighbours=["0.4.13", "0.4.18"]), prepared)  # type: ignore[arg-type]
    assert record["install"]["requires"] == ["flax>=0.10"]
    assert record["install"]["neighbours"] == []  # other releases' jaxlibs are not the answer
    assert record["install"]["how_to_supply"].startswith("Ask for a flax uploaded by 2023-10-18")


@pytest.mark.real_time  # waits out a real time limit
def test_a_repro_that_overruns_its_timeout_is_killed(capsys: Any) -> None:
    started = time.monotonic()
    ended = script_runs.run_child([sys.executable, "-c", "print('started', flush=True); import time; time.sleep(60)"], 2,
                             lambda m: None)
    assert ended.code is None
    assert ended.tail == ["started"]
    assert time.monotonic() - started < 10


def test_a_size_the_repro_refuses_is_recorded_as_refused_not_crashed(tmp_path: Path) -> None:
    from repro.contract import EXIT_REFUSED

    fake_python = tmp_path / "python"
    fake_python.write_text(f"#!/bin/sh\necho 'error: does not fit: needs about 780 GiB' >&2\nexit {EXIT_REFUSED}\n")
    fake_python.chmod(0o755)
    env = Environment(fake_python, {}, REUSED)
    fields = runner._run_repro(env, runner.RunRequest("correctness", "0.6.0"), {}, 30, lambda m: None)
    assert fields.status == "refused"
    assert fields.reason == "the repro refused the size: error: does not fit: needs about 780 GiB"


@pytest.mark.real_time  # waits out a real time limit
def test_a_terminated_session_kills_its_repro_and_leaves_no_temp_folder(tmp_path: Path) -> None:
    script = ("import sys; from kit import cli; from kit.run import script_runs\n"
              "with cli.unwind_on_stop_signals():\n"
              "    with script_runs.scratch_dir() as folder:\n"
              "        print(folder, flush=True)\n"
              "        script_runs.run_child([sys.executable, '-c', 'import time; print(\"child\", flush=True); time.sleep(60)'], 60,\n"
              "                              print)\n")
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True,
                            cwd=Path(__file__).resolve().parent.parent, env={**os.environ, "TMPDIR": str(tmp_path)})
    assert proc.stdout is not None
    folder = Path(proc.stdout.readline().strip())
    assert proc.stdout.readline().strip() == "child"
    assert folder.is_dir()
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(20) == 128 + signal.SIGTERM
    proc.stdout.close()
    assert not folder.exists()
    assert list(tmp_path.iterdir()) == [tmp_path / f"jax-kit-{os.getuid()}"]  # the kit's own folder, now empty
    assert list((tmp_path / f"jax-kit-{os.getuid()}").iterdir()) == []


def test_requires_is_for_script_checks(matrix: Matrix) -> None:
    with pytest.raises(UsageError, match="scaling is a built-in check: it imports only jax, numpy and scipy"):
        runner.parameters_for(matrix, runner.RunRequest("scaling", "0.4.16", requires=("flax",)))


# --------------------------------------------------------------------------
# An existing interpreter: the same one route, the record says where it ran

# A check script that writes what it was run with (its interpreter's JAX is a stand-in that reports a GPU).
REPORTING_SCRIPT = """
import json, os, sys
import jax
result = {"verdict": "unaffected", "reason": "ran on " + jax.default_backend(),
          "summary": {"xla_flags": os.environ.get("XLA_FLAGS", ""), "python": sys.executable,
                      "pycache_prefix": str(sys.pycache_prefix)}}
json.dump(result, open(os.environ["KIT_RESULT"], "w"))
"""


class NoIndex:
    """An index that fails the test when anything asks it."""

    def __getattr__(self, name: str) -> Any:
        pytest.fail(f"the index was asked ({name})")


@pytest.fixture
def script_matrix(tmp_path: Path) -> Matrix:
    (tmp_path / "report.py").write_text(REPORTING_SCRIPT)
    return parse_matrix({
        "kit": {"results_dir": str(tmp_path / "results"), "envs_dir": str(tmp_path / "envs")},
        "install": {"index_url": refused_url()},
        "release": [{"version": "0.4.35"}],
        "checks": {"scaling": {}, "correctness": {}, "report": {"script": "report.py", "host_devices": 4}},
    }, tmp_path / "matrix.toml")


def _existing_run(matrix: Matrix, check: str, python: Path, backend: str | None = None) -> dict[str, Any]:
    request = runner.RunRequest(check, "", existing=ExistingPython(python, backend=backend),
                                reproduce=f"python -m kit run {check} --python {python}")
    record, path = runner.run_check(matrix, request, lambda m: None, NoIndex())  # type: ignore[arg-type]
    assert records.load_records(matrix.results_dir).records == [record]
    assert "existing" in path.name
    return record


def test_an_existing_gpu_jax_runs_the_check_on_the_backend_it_reports(script_matrix: Matrix, tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    # No GPU here: the stand-in JAX reports one. What is tested is the kit's logic (no nvidia-smi guard,
    # no CPU host devices forced, the backend taken from JAX), not a GPU run.
    monkeypatch.setattr("shutil.which", lambda name: None)
    python = fake_interpreter(tmp_path / "gpu-node", RELEASE, backend="gpu", kind="NVIDIA H200", count=8)
    record = _existing_run(script_matrix, "report", python, backend="cuda")
    assert (record["status"], record["verdict"], record["reason"]) == ("ran", "unaffected", "ran on gpu")
    assert record["requested"] == {"jax": "0.4.35", "backend": "gpu", "preset": None, "python": str(python),
                                   "environment": None}
    assert record["environment"]["backend"] == "gpu"
    assert record["environment"]["jax"] == "0.4.35"
    assert "xla_force_host_platform_device_count" not in record["evidence"]["summary"]["xla_flags"]
    assert record["install"]["environment"] == "existing"
    assert record["install"]["interpreter"] == str(python)
    assert record["install"]["packages"] == RELEASE


def test_an_existing_tpu_jax_runs_the_check_on_its_chip_without_forced_host_devices(script_matrix: Matrix,
                                                                                        tmp_path: Path) -> None:
    # No TPU here: the stand-in JAX reports one v5e chip, as `python -m kit run CHECK --python python3` meets it
    # on a TPU machine; no --backend given, so the backend is the one JAX reports.
    python = fake_interpreter(tmp_path / "tpu-vm", RELEASE, backend="tpu", kind="TPU v5 lite", count=1)
    record = _existing_run(script_matrix, "report", python)
    assert (record["status"], record["reason"]) == ("ran", "ran on tpu")
    assert record["requested"]["backend"] == "tpu"
    assert "xla_force_host_platform_device_count" not in record["evidence"]["summary"]["xla_flags"]


def test_an_existing_cpu_jax_gets_the_check_s_host_devices(script_matrix: Matrix, tmp_path: Path) -> None:
    record = _existing_run(script_matrix, "report", fake_interpreter(tmp_path / "laptop", RELEASE))
    assert record["requested"]["backend"] == "cpu"
    assert "--xla_force_host_platform_device_count=4" in record["evidence"]["summary"]["xla_flags"]
    assert record["evidence"]["summary"]["pycache_prefix"] == str(sys.pycache_prefix)  # nothing written into it


def test_a_missing_scipy_is_an_inconclusive_record_and_nothing_runs(script_matrix: Matrix, tmp_path: Path) -> None:
    python = fake_interpreter(tmp_path / "venv", {k: v for k, v in RELEASE.items() if k != "scipy"},
                              jax_source="raise SystemExit('the check ran')")
    record = _existing_run(script_matrix, "correctness", python)
    assert (record["status"], record["verdict"]) == ("ran", "inconclusive")
    assert record["reason"].startswith(f"{python} has no scipy installed (jax 0.4.35, jaxlib 0.4.35, numpy 2.1.3 are")
    assert record["evidence"] == {}


def test_an_interpreter_without_jax_is_a_not_installable_record_that_asks_no_index(script_matrix: Matrix,
                                                                                   tmp_path: Path) -> None:
    record = _existing_run(script_matrix, "scaling", fake_interpreter(tmp_path / "venv", {"numpy": "2.1.3"}))
    assert record["status"] == "not-installable"
    assert "has no jax or jaxlib installed" in record["reason"]
    assert "neighbours" not in record["install"]
    assert record["requested"]["jax"] == ""


def test_a_record_names_the_interpreter_that_ran_relative_to_the_project(fake_releases: Any) -> None:
    """Records are pasted into bug threads: the venv's python, not this machine's absolute path to it."""
    releases = fake_releases(["0.6.0"])
    record, _path = runner.run_check(releases.matrix, runner.RunRequest("scaling", "0.6.0"), lambda m: None)
    executable = record["environment"]["executable"]
    assert not Path(executable).is_absolute() and executable.endswith("bin/python"), executable


def test_a_release_s_own_run_keeps_its_bytecode_in_its_environment(fake_releases: Any, tmp_path: Path) -> None:
    releases = fake_releases(["0.6.0"])
    (tmp_path / "report.py").write_text(
        "import json, os, sys\n"
        "json.dump({'summary': {'pycache_prefix': str(sys.pycache_prefix)}}, open(os.environ['KIT_RESULT'], 'w'))\n")
    check = dataclasses.replace(releases.matrix.check("scaling"), script=tmp_path / "report.py")
    record, _path = runner.run_check(releases.matrix, runner.RunRequest("scaling", "0.6.0", script=check),
                                     lambda m: None)
    [env] = [path for path in releases.matrix.envs_dir.iterdir() if path.is_dir() and path.name.startswith("jax-")]
    assert record["evidence"]["summary"]["pycache_prefix"] == str(env.absolute() / PYCACHE)
