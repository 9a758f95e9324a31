"""One process of a multi-process run: join JAX's own runtime, or say why it cannot.

The kit starts N copies of a repro (locally, or through ``srun`` on SLURM);
each calls `join` before it touches a device. Locally the launcher
(`kit.launch`) names the coordinator, the count and the rank in the
environment (``JAX_COORDINATOR_ADDRESS``, ``JAX_NUM_PROCESSES``,
``JAX_PROCESS_ID``), passed on as arguments; under ``srun`` nothing is passed
and ``jax.distributed.initialize()`` reads SLURM's variables itself.

CPU clients learned cross-process collectives in stages, so `join` asks the
release what it has instead of comparing versions:

* no CPU collectives option at all (up to ~0.4.21): either the CPU client
  ignores the distributed runtime (each process sees only itself, so
  ``process_count`` stays 1), or it joins but cannot run a collective;
* ``jax_cpu_enable_gloo_collectives`` (~0.4.22-0.4.29) and
  ``jax_cpu_collectives_implementation`` (~0.4.30 on) are opt-in gloo;
* from ~0.5.1 gloo is the default of the latter option.

A release that cannot form a cross-process CPU mesh raises `Unsupported`
with the reason; the repro writes it down and exits with
`EXIT_UNSUPPORTED`, so no process runs a collective that would hang.
Import this module only after XLA_FLAGS are final.
"""

from __future__ import annotations

import inspect
import os
import socket
from typing import Any, Dict, List, Optional

from repro.contract import EXIT_UNSUPPORTED  # noqa: F401  (the repro's exit code for "cannot run N processes")

# Where the local launcher puts the coordinator and this process's rank (kit/launch/spec.py).
COORDINATOR_ENV = "JAX_COORDINATOR_ADDRESS"
PROCESS_ID_ENV = "JAX_PROCESS_ID"

# Long enough for N processes to import jax on a busy 2-core machine; short
# enough that a partner that never came up ends the run well inside the kit's
# timeout (the launcher also kills the group).
INITIALIZATION_TIMEOUT_S = 120


class Unsupported(Exception):
    """This release cannot form the requested cross-process mesh; the message says why."""


def process_rank_hint() -> int:
    """This process's rank before (or without) jax: for naming its result file."""
    for name in (PROCESS_ID_ENV, "SLURM_PROCID"):
        value = os.environ.get(name, "")
        if value.isdigit():
            return int(value)
    return 0


def join(jax: Any, processes: int) -> Dict[str, Any]:
    """Join the N-process runtime; the facts of how, or `Unsupported`."""
    collectives = _enable_cpu_collectives(jax)
    keywords = _initialize_keywords(jax, processes)
    try:
        jax.distributed.initialize(**keywords)
    except Exception as error:
        raise Unsupported(f"jax.distributed.initialize failed: {_first_line(error)}") from None
    facts = local_facts(jax)
    facts["cpu_collectives"] = collectives
    facts["launched_by"] = "kit" if _launched_by_kit() else "cluster environment (e.g. srun)"
    _check_mesh_possible(jax, processes, facts)
    return facts


def _enable_cpu_collectives(jax: Any) -> Optional[str]:
    """Turn on gloo CPU collectives where the release has an option for it; which one."""
    for option, value in (("jax_cpu_collectives_implementation", "gloo"),
                          ("jax_cpu_enable_gloo_collectives", True)):
        try:
            jax.config.update(option, value)
        except Exception:  # unknown option on this release: try the older spelling
            continue
        return f"{option}={value}"
    return None


def _initialize_keywords(jax: Any, processes: int) -> Dict[str, Any]:
    keywords: Dict[str, Any] = {}
    if _launched_by_kit():
        keywords = {"coordinator_address": os.environ[COORDINATOR_ENV], "num_processes": processes,
                    "process_id": process_rank_hint()}
    try:
        accepted = set(inspect.signature(jax.distributed.initialize).parameters)
    except (TypeError, ValueError):
        accepted = set()
    if "initialization_timeout" in accepted:
        keywords["initialization_timeout"] = INITIALIZATION_TIMEOUT_S
    return keywords


def _launched_by_kit() -> bool:
    """The kit's local launcher named the coordinator and this rank (srun names neither)."""
    return bool(os.environ.get(COORDINATOR_ENV)) and os.environ.get(PROCESS_ID_ENV, "").isdigit()


def _check_mesh_possible(jax: Any, processes: int, facts: Dict[str, Any]) -> None:
    if facts["process_count"] != processes:
        raise Unsupported(
            f"jax {jax.__version__}'s {facts['backend']} client ignores jax.distributed: this process sees "
            f"process_count {facts['process_count']} and {facts['global_devices']} devices, not "
            f"{processes} processes, so there is no cross-process mesh to test")
    if facts["global_devices"] != facts["local_devices"] * processes:
        raise Unsupported(
            f"the device counts do not add up: {facts['global_devices']} devices in all but "
            f"{facts['local_devices']} here × {processes} processes")
    if facts["backend"] == "cpu" and facts["cpu_collectives"] is None:
        raise Unsupported(
            f"jax {jax.__version__} joins {processes} processes but its CPU client has no cross-process "
            "collectives (neither jax_cpu_collectives_implementation nor jax_cpu_enable_gloo_collectives "
            "exists), so a mesh over processes cannot run")


def local_facts(jax: Any) -> Dict[str, Any]:
    """What this process is and sees."""
    local = jax.local_devices()
    return {
        "process_index": jax.process_index(),
        "process_count": jax.process_count(),
        "backend": jax.default_backend(),
        "local_devices": len(local),
        "global_devices": len(jax.devices()),
        "host": socket.gethostname(),
        "pid": os.getpid(),
    }


def mesh_devices(jax: Any, count: int, processes: int) -> List[Any]:
    """``count`` devices, an equal share from every process, process by process."""
    per_process = count // processes
    chosen: List[Any] = []
    for index in range(processes):
        own = [device for device in jax.devices() if device.process_index == index]
        chosen += own[:per_process]
    return chosen


def global_array(jax: Any, host_value: Any, sharding: Any) -> Any:
    """A global array from a value every process holds in full (same seed everywhere)."""
    import numpy as np

    host = np.asarray(host_value)
    return jax.make_array_from_callback(host.shape, sharding, lambda index: host[index])


def leave(jax: Any) -> None:
    """Leave the runtime together, so no process outlives the coordinator's service."""
    shutdown = getattr(jax.distributed, "shutdown", None)
    if callable(shutdown):
        try:
            shutdown()
        except Exception:  # a partner already gone: the results are written, nothing to save
            pass


def _first_line(error: BaseException) -> str:
    text = f"{type(error).__name__}: {error}"
    return text.strip().splitlines()[0] if text.strip() else type(error).__name__

