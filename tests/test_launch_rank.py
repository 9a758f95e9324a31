"""repro.launch_rank: a rank the kit launched finds its place through JAX's own cluster detection (no JAX here:
a stand-in ``jax._src.clusters`` with the ClusterEnv contract every release from 0.4.13 has)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from repro import launch_rank

ROOT = Path(__file__).resolve().parent.parent

# ClusterEnv as jax/_src/clusters/cluster.py has it (0.4.13 on): subclasses append themselves; the first present
# one answers; SLURM's is there before the kit's registers.
_CLUSTERS = '''
class ClusterEnv:
    _cluster_types = []
    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        cls._cluster_types.append(cls)
    @classmethod
    def auto_detect(cls):
        env = next((e for e in cls._cluster_types if e.is_env_present()), None)
        return env and (env.__name__, env.get_coordinator_address(), env.get_process_count(), env.get_process_id())

class SlurmCluster(ClusterEnv):
    @classmethod
    def is_env_present(cls):
        import os
        return "SLURM_JOB_ID" in os.environ
    @classmethod
    def get_coordinator_address(cls, timeout_secs=None):
        return "slurmnode:61000"
    @classmethod
    def get_process_count(cls):
        return 8
    @classmethod
    def get_process_id(cls):
        return 5
'''


def _rank_run(tmp_path: Path, env: dict[str, str]) -> Any:
    """A fresh interpreter: the hook installed as the explain site installs it, then JAX's clusters imported."""
    package = tmp_path / "fake" / "jax" / "_src" / "clusters"
    package.mkdir(parents=True)
    (tmp_path / "fake" / "jax" / "__init__.py").write_text("")
    (tmp_path / "fake" / "jax" / "_src" / "__init__.py").write_text("")
    (package / "__init__.py").write_text(textwrap.dedent(_CLUSTERS))
    code = ("import json\nfrom repro import launch_rank\nlaunch_rank.install()\n"
            "from jax._src import clusters\n"
            "print(json.dumps([clusters.ClusterEnv.auto_detect(), launch_rank.facts]))\n")
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("SLURM_", "JAX_", "KIT_"))}
    done = subprocess.run([sys.executable, "-c", code], env={**clean, **env,
                          "PYTHONPATH": os.pathsep.join([str(tmp_path / "fake"), str(ROOT)])},
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


KIT_RANK = {"JAX_COORDINATOR_ADDRESS": "127.0.0.1:4567", "JAX_NUM_PROCESSES": "4", "JAX_PROCESS_ID": "2",
            "KIT_LAUNCHER": "local"}


def test_a_rank_the_kit_launched_is_answered_by_the_kits_cluster_before_slurms(tmp_path: Path) -> None:
    # Inside a SLURM allocation too: the kit's N local processes are the job, not SLURM's tasks.
    answer, facts = _rank_run(tmp_path, {**KIT_RANK, "SLURM_JOB_ID": "9"})
    assert answer == ["KitLaunch", "127.0.0.1:4567", 4, 2]
    assert facts["cluster"] == "kit"


def test_under_srun_slurms_cluster_answers_and_without_a_launcher_nothing_is_armed(tmp_path: Path) -> None:
    answer, facts = _rank_run(tmp_path / "srun", {"SLURM_JOB_ID": "9", "KIT_LAUNCHER": "srun"})
    assert answer == ["SlurmCluster", "slurmnode:61000", 8, 5]
    assert facts["cluster"].startswith("the cluster's own")
    answer, facts = _rank_run(tmp_path / "plain", {"SLURM_JOB_ID": "9"})
    assert answer[0] == "SlurmCluster" and facts == {}  # not the kit's run: the hook was never installed


def test_each_rank_fills_its_own_number_in_the_kits_values(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("JAX_PROCESS_ID", "SLURM_PROCID", "OMPI_COMM_WORLD_RANK", "PMI_RANK"):
        monkeypatch.delenv(name, raising=False)
    assert launch_rank.per_rank("--xla_dump_to=/d/rank-{rank}") == "--xla_dump_to=/d/rank-0"
    monkeypatch.setenv("SLURM_PROCID", "3")
    assert launch_rank.per_rank("/d/rank-{rank}") == "/d/rank-3"
    monkeypatch.setenv("JAX_PROCESS_ID", "1")  # the kit's own launcher first
    assert launch_rank.per_rank("/d/rank-{rank}") == "/d/rank-1"


def _jax(options: dict[str, Any], refuse: bool = False) -> SimpleNamespace:
    holders = {name: SimpleNamespace(value=value) for name, value in options.items()}

    def update(name: str, value: Any) -> None:
        if refuse:
            raise ValueError("cannot change it now")
        holders[name].value = value

    return SimpleNamespace(config=SimpleNamespace(_value_holders=holders, update=update))


@pytest.mark.parametrize("options, said, value", [
    # ~0.4.30-0.5.0: the option, not yet gloo by default.
    ({"jax_cpu_collectives_implementation": "none"}, "jax_cpu_collectives_implementation=gloo (set by the kit)",
     "gloo"),
    # ~0.4.22-0.4.29: the older boolean.
    ({"jax_cpu_enable_gloo_collectives": False}, "jax_cpu_enable_gloo_collectives=True (set by the kit)", True),
    # The program chose one itself: kept.
    ({"jax_cpu_collectives_implementation": "mpi"}, "jax_cpu_collectives_implementation=mpi", "mpi"),
    # Up to ~0.4.21: neither option.
    ({}, "none", None),
])
def test_gloo_is_set_by_the_option_the_release_has(monkeypatch: pytest.MonkeyPatch, options: dict[str, Any],
                                                   said: str, value: Any) -> None:
    jax = _jax(options)
    monkeypatch.setitem(sys.modules, "jax", jax)
    monkeypatch.setattr(launch_rank, "facts", {})
    launch_rank._enable_cpu_collectives()
    assert launch_rank.facts["cpu_collectives"] == said
    if options:
        assert next(iter(jax.config._value_holders.values())).value == value


def test_a_release_that_refuses_the_option_is_said_not_raised(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "jax", _jax({"jax_cpu_collectives_implementation": None}, refuse=True))
    monkeypatch.setattr(launch_rank, "facts", {})
    launch_rank._enable_cpu_collectives()
    assert launch_rank.facts["cpu_collectives"].startswith("jax_cpu_collectives_implementation=gloo refused")
