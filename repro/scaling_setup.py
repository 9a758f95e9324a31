"""What one scaling run works with: the devices (host devices forced, a target's compile-only ones, or several
processes' together), jax imported after they are asked for, and values placed on them (or shapes, for a target).

`repro.scaling` measures over what `start` sets up; `repro.scaling_target` says what a target is and how its
verdicts read.
"""

from __future__ import annotations

import atexit
import os
import shutil
import sys
import tempfile
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional

from repro import compile_cache, scaling_target
from repro import parameters as parameters_rules


def _progress(message: str) -> None:
    print(f"[scaling] {message}", file=sys.stderr, flush=True)


def force_host_devices(count: int) -> None:
    """Ask XLA's CPU backend for `count` devices; must run before jax is imported."""
    flag = f"--xla_force_host_platform_device_count={count}"
    existing = os.environ.get("XLA_FLAGS", "")
    kept = [part for part in existing.split() if not part.startswith("--xla_force_host_platform_device_count=")]
    os.environ["XLA_FLAGS"] = " ".join(kept + [flag])


@dataclass
class Setup:
    """What one run (or one process of a multi-process run) works with."""

    jax: Any
    compat: Any
    environment: Dict[str, Any]
    processes: int
    process: Optional[Dict[str, Any]]  # this process's facts in a multi-process run
    notes: List[str]
    compile_cache: compile_cache.CompileCache = field(default_factory=compile_cache.CompileCache.unasked)
    target: Optional[Dict[str, Any]] = None
    """What it compiles for instead of running (`repro.scaling_target`); None: it runs on ``jax.devices()``."""
    compile_only: List[Any] = field(default_factory=list)
    """The target's compile-only devices, never run on."""
    single_chip: Optional[str] = None
    """The device kind of the one TPU chip that made it compile for a target (None: asked with --target)."""


def start(parameters: Dict[str, Any]) -> Setup:
    """Force the host devices, import jax, join the other processes if there are any.

    With a target: no host devices (nothing runs), libtpu told it is not on a TPU VM, and no compile cache
    (compile-only executables are not ones to keep).
    """
    processes = parameters.get("processes", 1)
    target = parameters_rules.target_of(parameters.get("target"))
    if target is None:
        force_host_devices(max(parameters["devices"]) // processes)
    else:
        from repro import target_devices

        if target["platform"] == "cuda":  # the plugin on CPU, its dump read where a compile gives no text
            dump = tempfile.mkdtemp(prefix="kit-target-dump-")
            atexit.register(shutil.rmtree, dump, True)
            target_devices.prepare_gpu_process(dump)
        target_devices.prepare_process()  # before jax is imported
    import jax

    cache = compile_cache.enable(jax) if target is None else compile_cache.CompileCache.unasked()
    if parameters["dtype"] == "float64":
        jax.config.update("jax_enable_x64", True)
    process = None
    if processes > 1:
        from repro import distributed

        _progress(f"joining {processes} processes through jax.distributed")
        process = distributed.join(jax, processes)  # before anything touches a device
    from repro import compat
    from repro.environment import describe_environment

    setup = Setup(jax, compat, describe_environment(), processes, process, [], cache, target)
    if target is None and processes == 1:
        single_chip_target(setup)
    return setup


def single_chip_target(setup: Setup) -> None:
    """On one real TPU chip: compile for that kind's 2x2 instead, since one device cannot show replication."""
    env = setup.environment
    target = scaling_target.single_chip_slice(env.get("backend"), env.get("device_kind"), env.get("device_count"))
    if target is None:
        return
    setup.target, setup.single_chip = target, env.get("device_kind")
    setup.notes.append(scaling_target.why_this_target(target, setup.single_chip))
    _progress(setup.notes[-1])


def compile_only_devices(setup: Setup) -> str:
    """Find the target's compile-only devices and say so in the environment; why not, where they cannot be had.

    A release without ``jax.experimental.topologies``, or without the target's compiler (jax[tpu] before 0.5.3
    names libtpu-nightly, which the index does not serve), cannot compile for it: that is no verdict on JAX.
    """
    from repro import target_devices

    target = setup.target
    assert target is not None
    try:
        setup.compile_only = list(target_devices.compile_only_devices(setup.jax, target))
    except Exception as error:  # ImportError, a libtpu that is missing or refuses the topology: all the same here
        return f"{type(error).__name__}: {error}".splitlines()[0]
    kind = target_devices.device_kind(setup.compile_only)
    setup.environment.update(
        host_backend=setup.environment.get("backend"), backend=target["platform"],
        device_kind=kind["kind"] or None, device_count=kind["count"], compiled_for=target["title"],
        target=target["name"])
    return ""


def cannot_compile_for(setup: Setup, parameters: Dict[str, Any], why: str) -> Dict[str, Any]:
    """The result where the target's devices could not be had: inconclusive, never a verdict on JAX."""
    assert setup.target is not None
    result = scaling_target.cannot_compile_result(setup.target, why, setup.environment, parameters, setup.notes)
    _progress(result["reason"])
    return {"result": result, "cases": [], "rows": []}


def device_counts(setup: Setup, parameters: Dict[str, Any]) -> List[int]:
    """The requested device counts this run can measure; notes say why any are left out."""
    available = len(setup.compile_only) if setup.target is not None else len(setup.jax.devices())
    requested = parameters["devices"]
    measured = [count for count in requested if count <= available]
    if len(measured) < len(requested):
        where = setup.target["title"] if setup.target is not None else setup.environment["backend"]
        setup.notes.append(f"requested {[c for c in requested if c > available]} devices but only {available} "
                           f"exist on {where}; measured {measured or 'nothing'}")
    if setup.processes > 1:
        even = [count for count in measured if count % setup.processes == 0]
        if len(even) < len(measured):
            setup.notes.append(f"{[c for c in measured if c not in even]} devices cannot be shared equally by "
                               f"{setup.processes} processes; measured {even or 'nothing'}")
        measured = even
    on = (f"on {setup.environment['backend']}" if setup.target is None
          else f"compiling for {setup.target['title']}, running nothing")
    _progress(f"jax {setup.environment['jax']} {on}: {available} devices"
              + (f" over {setup.processes} processes" if setup.processes > 1 else "") + f", measuring {measured}")
    return measured


def mesh_devices(setup: Setup, count: int) -> List[Any]:
    if setup.target is not None:
        return setup.compile_only[:count]
    if setup.processes > 1:
        from repro import distributed

        return distributed.mesh_devices(setup.jax, count, setup.processes)
    return list(setup.jax.devices()[:count])


def put(setup: Setup, value: Any, sharding: Any) -> Any:
    """``value`` laid out by ``sharding``; across processes each one supplies its own shards."""
    if setup.processes == 1:
        return setup.jax.device_put(value, sharding)
    from repro import distributed

    return setup.jax.tree_util.tree_map(lambda leaf: distributed.global_array(setup.jax, leaf, sharding), value)


def placed(setup: Setup, value: Any, sharding: Any) -> Any:
    """``value`` laid out by ``sharding``: shapes given the sharding for a target, arrays put on devices otherwise."""
    if setup.target is None:
        return put(setup, value, sharding)
    jax = setup.jax
    return jax.tree_util.tree_map(lambda leaf: jax.ShapeDtypeStruct(leaf.shape, leaf.dtype, sharding=sharding), value)
