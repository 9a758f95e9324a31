"""repro.distributed: feature detection of CPU collectives and the checks before a cross-process mesh.

jax itself is faked: these tests pin down what `join` concludes from what a
release offers; the integration tests run real releases.
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from repro import distributed


class FakeConfig:
    def __init__(self, options: dict[str, Any]) -> None:
        self.options = options

    def update(self, name: str, value: Any) -> None:
        if name not in self.options:
            raise AttributeError(f"Unrecognized config option: {name}")
        self.options[name] = value


def fake_jax(options: dict[str, Any], process_count: int = 2, local: int = 2, total: int = 4,
             fail: Exception | None = None) -> Any:
    calls: list[dict[str, Any]] = []

    def initialize(coordinator_address: Any = None, num_processes: Any = None, process_id: Any = None,
                   local_device_ids: Any = None, initialization_timeout: int = 300) -> None:
        if fail:
            raise fail
        calls.append({"coordinator_address": coordinator_address, "num_processes": num_processes,
                      "process_id": process_id, "initialization_timeout": initialization_timeout})

    devices = [SimpleNamespace(id=i, process_index=i // local) for i in range(total)]
    return SimpleNamespace(
        __version__="0.x", config=FakeConfig(options), calls=calls,
        distributed=SimpleNamespace(initialize=initialize),
        process_index=lambda: 0, process_count=lambda: process_count, default_backend=lambda: "cpu",
        local_devices=lambda: devices[:local], devices=lambda: devices)


@pytest.fixture(autouse=True)
def local_launch(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(distributed.COORDINATOR_ENV, "127.0.0.1:1234")
    monkeypatch.setenv(distributed.PROCESS_ID_ENV, "1")


def test_the_newer_option_is_preferred_where_it_exists() -> None:
    jax = fake_jax({"jax_cpu_collectives_implementation": None, "jax_cpu_enable_gloo_collectives": False})
    facts = distributed.join(jax, 2)
    assert facts["cpu_collectives"] == "jax_cpu_collectives_implementation=gloo"
    assert jax.config.options["jax_cpu_enable_gloo_collectives"] is False  # the deprecated one stays off
    assert jax.calls == [{"coordinator_address": "127.0.0.1:1234", "num_processes": 2, "process_id": 1,
                          "initialization_timeout": distributed.INITIALIZATION_TIMEOUT_S}]


def test_the_older_gloo_switch_is_used_where_only_it_exists() -> None:
    jax = fake_jax({"jax_cpu_enable_gloo_collectives": False})
    assert distributed.join(jax, 2)["cpu_collectives"] == "jax_cpu_enable_gloo_collectives=True"


def test_a_client_that_ignores_the_runtime_is_unsupported_not_a_false_verdict() -> None:
    jax = fake_jax({}, process_count=1, local=2, total=2)
    with pytest.raises(distributed.Unsupported, match="ignores jax.distributed.*process_count 1"):
        distributed.join(jax, 2)


def test_a_release_that_joins_but_has_no_cpu_collectives_is_unsupported() -> None:
    with pytest.raises(distributed.Unsupported, match="no cross-process collectives"):
        distributed.join(fake_jax({}), 2)


def test_device_counts_that_do_not_add_up_are_unsupported() -> None:
    with pytest.raises(distributed.Unsupported, match="do not add up"):
        distributed.join(fake_jax({"jax_cpu_collectives_implementation": None}, local=2, total=3), 2)


def test_an_initialize_failure_is_one_line_not_a_traceback() -> None:
    jax = fake_jax({}, fail=RuntimeError("DEADLINE_EXCEEDED: barrier timed out\nlong C++ trace"))
    with pytest.raises(distributed.Unsupported) as caught:
        distributed.join(jax, 2)
    assert str(caught.value) == "jax.distributed.initialize failed: RuntimeError: DEADLINE_EXCEEDED: barrier timed out"


def test_under_srun_initialize_gets_no_coordinator(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(distributed.COORDINATOR_ENV)
    jax = fake_jax({"jax_cpu_collectives_implementation": None})
    facts = distributed.join(jax, 2)
    assert jax.calls[0]["coordinator_address"] is None  # jax reads SLURM's variables itself
    assert facts["launched_by"].startswith("cluster environment")


def test_the_mesh_takes_an_equal_share_from_every_process() -> None:
    jax = fake_jax({}, local=3, total=6)
    chosen = distributed.mesh_devices(jax, 4, 2)
    assert [(d.process_index, d.id) for d in chosen] == [(0, 0), (0, 1), (1, 3), (1, 4)]


def test_the_rank_hint_reads_the_launcher_then_slurm(monkeypatch: pytest.MonkeyPatch) -> None:
    assert distributed.process_rank_hint() == 1
    monkeypatch.delenv(distributed.PROCESS_ID_ENV)
    monkeypatch.setenv("SLURM_PROCID", "3")
    assert distributed.process_rank_hint() == 3
