"""Compile what a program exported (`repro.target_export`) for a chip this machine does not have.

    python -m repro.target_compile --exports DIR --target TARGET.json --dump DIR --out RESULT.json

For each exported computation: deserialize it, rebuild each input's sharding
over the target's compile-only devices (`repro.target_devices`: the same mesh
axes and sizes, the same partition spec), compile it with the target's own
compiler, and write the HLO before and after optimizations into ``--dump``
named as XLA's dump names them (``module_0001.jit_loss.after_optimizations.txt``),
so the kit reads them as it reads a CPU run's dump. RESULT.json says what
compiled, what did not and why, and what the devices were. Nothing runs on
the target: its devices cannot execute.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import sys
import time
from typing import Any, Dict, List, Optional

from repro import target_devices, target_export


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m repro.target_compile", description=__doc__.split("\n\n")[0])
    parser.add_argument("--exports", required=True)
    parser.add_argument("--target", required=True, help="the target as kit.targets.Target.to_json() wrote it")
    parser.add_argument("--dump", required=True)
    parser.add_argument("--out", required=True)
    args = parser.parse_args(argv)
    with open(args.target, encoding="utf-8") as file:
        target = json.load(file)
    # The CUDA plugin up to jax 0.6 gives no text for a compile-only compile: XLA's own dump, beside ours, does.
    raw = os.path.join(os.path.dirname(os.path.abspath(args.dump)), "xla-dump") if target["platform"] == "cuda" else None
    if raw is not None:
        # A deviceless compile cannot time kernels: without autotuning off, jax 0.5 and 0.6 stop at the first
        # matmul with "Expect autotune result cache hit for deviceless compilation". The defaults chosen instead
        # change kernels, not how the program is partitioned. (And JAX on CPU beside the plugin.)
        target_devices.prepare_gpu_process(raw)
    else:
        target_devices.prepare_process(raw)
    result: Dict[str, Any] = {"target": target, "modules": [], "failed": [], "export_errors": []}
    started = time.monotonic()
    import jax

    result["jax"] = getattr(jax, "__version__", "")
    try:
        devices = target_devices.compile_only_devices(jax, target)
    except Exception as error:  # no compiler for the target in this environment: said, nothing compiled
        result["no_devices"] = _said(error)
        _write(args.out, result)
        return 0
    result["devices"] = target_devices.device_kind(devices)
    entries = target_export.manifest(args.exports)
    result["export_errors"] = [entry["error"] for entry in entries if "error" in entry][:20]
    result["counts"] = target_export.counts(entries)
    os.makedirs(args.dump, exist_ok=True)
    for number, entry in enumerate((e for e in entries if "file" in e), 1):
        try:
            name = _compile(jax, devices, args.exports, entry, number, args.dump, raw)
            result["modules"].append({"number": number, "file": entry["file"], "name": name})
        except Exception as error:  # one computation the target cannot compile: named, the rest still count
            result["failed"].append({"number": number, "file": entry["file"], "function": entry.get("function", ""),
                                     "error": _said(error)})
        print(f"[target] {number} compiled for {target.get('title', target.get('name'))}", file=sys.stderr,
              flush=True)
    result["seconds"] = round(time.monotonic() - started, 2)
    _write(args.out, result)
    return 0


def _compile(jax: Any, devices: List[Any], folder: str, entry: Dict[str, Any], number: int, dump: str,
             raw: Optional[str]) -> str:
    """One exported computation compiled over the target's devices; its two texts written; the module's name."""
    with open(os.path.join(folder, entry["file"]), "rb") as blob:
        exported = target_export.export_module(jax).deserialize(bytearray(blob.read()))
    specs = _input_specs(jax, exported, entry.get("shardings"), devices)
    args, kwargs = jax.tree_util.tree_unflatten(exported.in_tree, specs)
    function = _named(exported.call, str(entry.get("function") or "exported"))
    lowered = jax.jit(function).lower(*args, **kwargs)
    name = "jit_" + re.sub(r"[^\w.\-]", "_", function.__name__)
    stem = os.path.join(dump, f"module_{number:04d}.{name}.")
    # Before the compile: where it fails (cuSOLVER's potrf on jax 0.5.x without a GPU), the module's ops are
    # still read, as ones the compile cannot tell about, never as split.
    before = target_devices.before_text(lowered)
    if before:
        _write_text(stem + "before_optimizations.txt", before)
    compiled = lowered.compile()
    dumped_before, after = target_devices.compiled_texts(lowered, compiled, raw)
    if after is None:
        raise RuntimeError("the target's compiler gave no HLO text for it")
    _write_text(stem + "after_optimizations.txt", after)
    if dumped_before and not before:
        _write_text(stem + "before_optimizations.txt", dumped_before)
    return name


def _input_specs(jax: Any, exported: Any, shardings: Optional[List[Any]], devices: List[Any]) -> List[Any]:
    """Each input as a ShapeDtypeStruct laid out as the program laid it out, over the target's devices."""
    from jax.sharding import Mesh, NamedSharding, PartitionSpec

    avals = list(exported.in_avals)
    meshes: Dict[tuple, Any] = {}
    specs = []
    for index, aval in enumerate(avals):
        layout = shardings[index] if shardings and index < len(shardings) else None
        sharding = None
        if layout:
            key = (tuple(layout["axes"]), tuple(layout["sizes"]))
            if key not in meshes:
                count = math.prod(layout["sizes"])
                if count > len(devices):
                    raise ValueError(f"the program's mesh has {count} devices; the target has {len(devices)}")
                grid = _grid(devices[:count], layout["sizes"])
                meshes[key] = Mesh(grid, tuple(layout["axes"]))
            parts = [tuple(p) if isinstance(p, list) else p for p in layout["spec"]]
            sharding = NamedSharding(meshes[key], PartitionSpec(*parts))
        elif meshes or exported.nr_devices > 1:
            mesh = next(iter(meshes.values()), None) or Mesh(_grid(devices[:exported.nr_devices],
                                                                  [exported.nr_devices]), ("kit_devices",))
            sharding = NamedSharding(mesh, PartitionSpec())  # replicated, as an unsharded input is
        specs.append(jax.ShapeDtypeStruct(aval.shape, aval.dtype, sharding=sharding))
    return specs


def _grid(devices: List[Any], sizes: List[int]) -> Any:
    import numpy as np

    grid = np.empty(len(devices), dtype=object)
    grid[:] = devices
    return grid.reshape(sizes)


def _named(call: Any, name: str) -> Any:
    """The exported call under the program's function name, so the module and its op paths read as on CPU."""
    def function(*args: Any, **kwargs: Any) -> Any:
        return call(*args, **kwargs)

    function.__name__ = function.__qualname__ = re.sub(r"\W", "_", name) or "exported"
    return function


def _said(error: BaseException) -> str:
    return f"{type(error).__name__}: {error}".splitlines()[0][:500]


def _write_text(path: str, text: str) -> None:
    with open(path, "w", encoding="utf-8") as out:
        out.write(text)


def _write(path: str, result: Dict[str, Any]) -> None:
    with open(path, "w", encoding="utf-8") as out:
        json.dump(result, out, indent=1)


if __name__ == "__main__":
    sys.exit(main())
