"""A catalogue check compiled for a chip this machine lacks: the target's compile-only devices, and what its HLO says.

The kit runs a catalogue entry that names ``targets`` (docs/known.md) in the
release installed with that chip's compiler (jax[tpu]'s libtpu, or the CUDA
plugin), with ``KIT_TARGET`` set to the target's JSON
(`kit.targets.Target.to_json`). The check calls `begin` before ``import jax``
(libtpu and the plugin read their settings at import), then `devices` for a
mesh to compile over. Nothing runs on those devices: the check decides from
the target compiler's HLO, and every line it prints says "compiled for ...,
not run" (`not_run`).

Standard library until `devices` (jax is the caller's); the HLO is read by
`repro.hlo_text`, the one reader.
"""

from __future__ import annotations

import atexit
import json
import os
import shutil
import sys
import tempfile
from typing import Any, Dict, List, Sequence, Tuple

ENV = "KIT_TARGET"
"""The target's JSON, set by the kit (`kit.known.runs`) for an entry's run compiled for it."""

PROBE_ENV = {"JAX_PLATFORMS": "cpu", "TPU_SKIP_MDS_QUERY": "1", "ALLOW_MULTIPLE_LIBTPU_LOAD": "1"}
"""How the kit asks whether JAX runs at all in such an environment after a check failed: on CPU, libtpu told it is
not on a TPU VM (without, ``import jax`` with jax[tpu] installed waits minutes on a metadata server)."""


def begin() -> Dict[str, Any]:
    """The target this check compiles for, this process prepared for its compiler; exit 125 without one."""
    raw = os.environ.get(ENV, "")
    if not raw:
        print("this check compiles for a chip (KIT_TARGET is not set): run it with jax-kit audit --target")
        sys.exit(125)
    target = json.loads(raw)
    from repro import target_devices

    if target["platform"] == "cuda":  # the plugin on CPU, its dump read where a compile gives no text
        dump = tempfile.mkdtemp(prefix="kit-target-dump-")
        atexit.register(shutil.rmtree, dump, True)
        target_devices.prepare_gpu_process(dump)
    target_devices.prepare_process()
    return target


def not_run(target: Dict[str, Any]) -> str:
    """``compiled for TPU v5e 2x2 (4 devices), not run``: what every line of such a check says."""
    return f"compiled for {target['title']}, not run"


def devices(jax: Any, target: Dict[str, Any]) -> List[Any]:
    """The target's compile-only devices; exit 125 (cannot tell) where this environment has no compiler for it."""
    from repro import target_devices

    try:
        return list(target_devices.compile_only_devices(jax, target))
    except Exception as error:  # no libtpu or plugin, or one that refuses the topology: no verdict on JAX
        first = f"{type(error).__name__}: {error}".splitlines()[0][:300]
        print(f"cannot compile for {target['title']} in this environment ({first}): install the release with "
              f"its compiler (jax[tpu], or the CUDA plugin), as jax-kit audit RELEASE --target does")
        sys.exit(125)


def compiled_text(compiled: Any) -> str:
    """The target compiler's optimised HLO (from XLA's dump where the CUDA plugin's compile gives no text)."""
    from repro import compat

    return compat.compiled_hlo_text(compiled)


def linalg_calls(text: str, kind: str) -> List[Tuple[str, Tuple[int, ...]]]:
    """Each custom call computing ``kind`` (``lu``): its target and first result's dimensions, as compiled."""
    from repro import hlo_text

    module = hlo_text.read_text(text)
    found = []
    for _computation, instruction in module.instructions():
        if instruction.opcode == "custom-call" and hlo_text.linalg_kind(instruction.target) == kind:
            arrays = instruction.arrays
            found.append((instruction.target, arrays[0].dims if arrays else ()))
    return found


def batches(jax: Any, function: Any, argument: Any, kind: str) -> Tuple[List[int], List[str], int]:
    """``function`` jitted and compiled for ``argument``'s (sharded) layout: the batch each ``kind`` custom call
    holds per device, the calls' targets, and how many all-gathers the module has."""
    text = compiled_text(jax.jit(function).lower(argument).compile())
    calls = linalg_calls(text, kind)
    held = sorted({dims[0] for _target, dims in calls if len(dims) == 3})
    return held, sorted({target for target, _dims in calls}), collectives(text).count("all-gather")


def held_by_calls(jax: Any, function: Any, arguments: Sequence[Any], kinds: Sequence[str]
                  ) -> Tuple[List[Tuple[str, str, int]], int]:
    """``function`` jitted and compiled for ``arguments``' (sharded) layouts: its `calls_held` of ``kinds`` and
    how many all-gathers the module has."""
    text = compiled_text(jax.jit(function).lower(*arguments).compile())
    return calls_held(text, kinds), collectives(text).count("all-gather")


def calls_held(text: str, kinds: Sequence[str]) -> List[Tuple[str, str, int]]:
    """Each custom call of the compiled module computing one of ``kinds``, once per (kind, target, batch) in the
    module's order, with the batch it holds per device: its first result's leading dimension, whatever the rank
    (EighTpu's first result is ``[batch, 4]``, InvertDiagBlocks' ``[batch, 1, n, n]``, getrf's ``[batch, n, n]``)."""
    from repro import hlo_text

    found: List[Tuple[str, str, int]] = []
    for _computation, instruction in hlo_text.read_text(text).instructions():
        kind = hlo_text.linalg_kind(instruction.target) if instruction.opcode == "custom-call" else ""
        dims = instruction.arrays[0].dims if instruction.arrays else ()
        if kind in kinds and len(dims) >= 2 and (kind, instruction.target, dims[0]) not in found:
            found.append((kind, instruction.target, dims[0]))
    return found


def said_calls(calls: Sequence[Tuple[str, str, int]], batch: int) -> str:
    """``EighTpu on 1024 of 1024, InvertDiagBlocksUpperTriangular on 256 of 1024``: what `held_by_calls` found."""
    return ", ".join(f"{target} on {held} of {batch}" for _kind, target, held in calls)


def collectives(text: str) -> List[str]:
    """The collective ops of the compiled module, in order (``all-gather``)."""
    from repro import hlo_text

    module = hlo_text.read_text(text)
    return [kind for _c, i in module.instructions() for kind in [hlo_text.collective_kind(i.opcode)] if kind]
