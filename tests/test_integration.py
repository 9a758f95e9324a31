"""Real releases, installed from the index, run for real (slow; needs the index).

One affected and one fixed release for each check's verdict, the oldest
release the repro supports for portability, and one release whose jaxlib the
index no longer has.
"""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from kit.config import Matrix, load_matrix
from kit.run.runner import RunRequest, run_check

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parent.parent

# Enough for the structural evidence and a rough timing; seconds on 2 cores.
SMALL_SCALING = {"devices": [1, 2, 4], "batch": 1024, "repeats": 3, "warmup": 1,
                 "modes": ["jit"], "passes": ["forward"]}


@pytest.fixture(scope="module")
def matrix(tmp_path_factory: pytest.TempPathFactory) -> Matrix:
    real = load_matrix(ROOT / "matrix.toml")
    # Records go to a scratch folder; environments are shared with the sessions.
    return dataclasses.replace(real, results_dir=tmp_path_factory.mktemp("results"))


def _run(matrix: Matrix, check: str, version: str, **overrides: Any) -> dict[str, Any]:
    request = RunRequest(check=check, version=version, overrides=overrides, reproduce=f"test {check} {version}")
    record, path = run_check(matrix, request, log=lambda m: print(m, file=sys.stderr))
    assert json.loads(path.read_text()) == record  # what we got is what was written
    return record


def test_jax_0_4_35_replicates_the_lu_on_every_device(matrix: Matrix) -> None:
    record = _run(matrix, "scaling", "0.4.35", **SMALL_SCALING)
    assert record["status"] == "ran", record["reason"]
    assert record["environment"]["jax"] == "0.4.35"
    assert record["environment"]["device_count"] == 4
    summary = record["evidence"]["summary"]
    assert record["verdict"] == "affected", record["reason"]
    assert summary["all_gathers"] > 0
    assert summary["lu_batch_per_device"] == summary["global_batch"] == 1024
    assert summary["positive_control_ok"] is True
    # Timings as speedups over one device, slogdet's and the control's, each by name.
    assert all(isinstance(summary[f"{loss}_speedup_{n}"], float) for loss in ("slogdet", "control") for n in (2, 4))
    assert not any(key.startswith("efficiency") for key in summary)


def test_jax_0_6_0_splits_the_lu_across_devices(matrix: Matrix) -> None:
    record = _run(matrix, "scaling", "0.6.0", **SMALL_SCALING)
    assert record["status"] == "ran", record["reason"]
    summary = record["evidence"]["summary"]
    assert record["verdict"] == "unaffected", record["reason"]
    assert summary["all_gathers"] == 0
    assert summary["lu_batch_per_device"] == summary["global_batch"] // 4 == 256


# Runs one check in a fresh process, whose proxy settings urllib and uv read at start.
_RUN_IN_A_FRESH_PROCESS = """
import dataclasses, json, sys
from pathlib import Path
from kit.config import load_matrix
from kit.run.runner import RunRequest, run_check
matrix = dataclasses.replace(load_matrix("matrix.toml"), results_dir=Path(sys.argv[1]))
request = RunRequest("scaling", "0.6.0", overrides=json.loads(sys.argv[2]))
record, _ = run_check(matrix, request, lambda m: print(m, file=sys.stderr))
print(json.dumps({"status": record["status"], "verdict": record["verdict"]}))
"""


def test_a_built_release_runs_with_the_network_cut(matrix: Matrix, tmp_path: Path) -> None:
    online = _run(matrix, "scaling", "0.6.0", **SMALL_SCALING)  # builds (or reuses) the environment
    cut = {"HTTPS_PROXY": "http://127.0.0.1:9", "https_proxy": "http://127.0.0.1:9",
           "HTTP_PROXY": "http://127.0.0.1:9", "http_proxy": "http://127.0.0.1:9"}
    proc = subprocess.run([sys.executable, "-c", _RUN_IN_A_FRESH_PROCESS, str(tmp_path), json.dumps(SMALL_SCALING)],
                          cwd=ROOT, capture_output=True, text=True, env={**os.environ, **cut}, timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    offline = json.loads(proc.stdout.strip().splitlines()[-1])
    assert offline == {"status": "ran", "verdict": online["verdict"]}
    assert "as locked in" in proc.stderr


def test_the_oldest_supported_release_runs_the_repro(matrix: Matrix) -> None:
    # jax 0.4.13 needs numpy 1.x and Python <= 3.11: the era resolution must find both.
    record = _run(matrix, "scaling", "0.4.13", **SMALL_SCALING)
    assert record["status"] == "ran", record["reason"]
    assert record["environment"]["numpy"].startswith("1.")
    assert record["install"]["python"] in ("3.9", "3.10", "3.11")
    assert record["verdict"] in ("affected", "unaffected", "inconclusive")


def test_a_release_whose_jaxlib_left_the_index_is_reported_not_installable(matrix: Matrix) -> None:
    # The index alone decides: JAX's archive (not reachable from every machine) would otherwise be asked too.
    index_only = dataclasses.replace(matrix, install=dataclasses.replace(matrix.install, jaxlib_archive=""))
    record = _run(index_only, "scaling", "0.4.16")
    assert record["status"] == "not-installable"
    assert "no jaxlib 0.4.16 wheels" in record["reason"]
    assert record["install"]["neighbours"] == ["0.4.13", "0.4.18"]
    assert "--find-links" in record["install"]["how_to_supply"]


def test_correctness_on_cpu_crosses_the_boundary_and_says_it_was_cpu(matrix: Matrix) -> None:
    record = _run(matrix, "correctness", "0.4.36", dtypes=["float32"])
    assert record["status"] == "ran", record["reason"]
    assert record["environment"]["backend"] == "cpu"
    summary = record["evidence"]["summary"]
    assert summary["crossed_boundary"] is True
    assert summary["checked_count"] > 0
    assert record["verdict"] == "unaffected", record["reason"]
    assert "CPU" in record["reason"]


def test_nox_lists_a_session_per_release_and_check() -> None:
    listed = subprocess.run([sys.executable, "-m", "nox", "-l"], cwd=ROOT, capture_output=True, text=True,
                            check=True).stdout
    for version in ("0.4.16", "0.4.35", "0.4.36", "0.5.3", "0.6.0"):
        assert f"scaling-{version}" in listed
        assert f"correctness-{version}" in listed


def _gpu_plan(version: str) -> Any:
    from kit.install.index import PackageIndex
    from kit.install.key import InstallKey
    from kit.install.plan import plan_install

    real = load_matrix(ROOT / "matrix.toml")
    return plan_install(real, real.release(version), InstallKey("cuda"), PackageIndex(real.install.index_url))


def _resolve_gpu(version: str) -> tuple[Any, Any]:
    from kit.install.plan import resolve

    plan = _gpu_plan(version)
    return plan, resolve(plan, "3.11")


def test_gpu_plan_of_the_cuda12_plugin_era_resolves_without_downloading() -> None:
    plan, resolution = _resolve_gpu("0.4.35")
    assert plan.requirements[0] == "jax[cuda12]==0.4.35"
    assert resolution.ok, resolution.error
    assert resolution.versions["jax-cuda12-plugin"] == "0.4.35"
    # The release pins its own jaxlib for GPUs, and the NVIDIA libraries are of its era.
    assert resolution.versions["jaxlib"] == "0.4.34"
    assert resolution.versions["nvidia-cudnn-cu12"].startswith("9.5.")


def test_gpu_plan_of_the_cuda12_pip_era_needs_jax_s_own_page() -> None:
    # Planned only: resolving needs that page, which this machine cannot reach (tests/faults/test_network.py).
    plan = _gpu_plan("0.4.18")
    assert plan.requirements[0] == "jax[cuda12_pip]==0.4.18"
    assert any("jax_cuda_releases.html" in link for link in plan.find_links)


# Two processes joined by jax.distributed, each with 2 of the 4 forced host devices.
TWO_PROCESSES = {**SMALL_SCALING, "devices": [2, 4], "processes": 2}


def test_two_processes_on_jax_0_6_0_split_the_lu_and_agree(matrix: Matrix) -> None:
    record = _run(matrix, "scaling", "0.6.0", **TWO_PROCESSES)
    assert record["status"] == "ran", record["reason"]
    assert record["verdict"] == "unaffected", record["reason"]
    assert record["environment"]["process_count"] == 2
    assert record["environment"]["device_count"] == 4
    processes = record["evidence"]["processes"]
    assert [p["process_index"] for p in processes] == [0, 1]
    assert [p["local_devices"] for p in processes] == [2, 2]
    assert record["evidence"]["processes_agree"] is True
    assert {p["lu_batch_per_device"] for p in processes} == {256}


def test_two_processes_on_jax_0_4_35_replicate_the_lu_through_an_all_gather(matrix: Matrix) -> None:
    record = _run(matrix, "scaling", "0.4.35", **TWO_PROCESSES)
    assert record["status"] == "ran", record["reason"]
    assert record["verdict"] == "affected", record["reason"]
    assert "all-gather" in record["reason"]
    assert record["evidence"]["summary"]["lu_fed_by"] == "all-gather"
    # 0.4.35 has CPU collectives only when asked for: the repro found the option.
    assert {p["cpu_collectives"] for p in record["evidence"]["processes"]} == {
        "jax_cpu_collectives_implementation=gloo"}


def test_two_processes_on_a_release_without_cpu_collectives_end_unsupported(matrix: Matrix) -> None:
    record = _run(matrix, "scaling", "0.4.13", **TWO_PROCESSES)
    assert record["status"] == "unsupported", record
    assert "process_count 1" in record["reason"]
    assert record["verdict"] is None
