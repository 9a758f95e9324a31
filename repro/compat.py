"""Feature detection so one repro runs on every JAX from 0.4.13 to the newest.

Every helper asks jax what it has (attributes, signatures) instead of
comparing version strings: point releases and backports make version
arithmetic lie, a missing attribute never does. Import this module only
after XLA_FLAGS are final, since it imports jax.
"""

from __future__ import annotations

import inspect
import os
from typing import Any, Callable, Dict, Optional, Sequence, Tuple

import jax
import numpy as np
from jax.sharding import Mesh


def _shard_map_function() -> Tuple[str, Callable[..., Any]]:
    """shard_map and the public path it was found at."""
    # jax.shard_map became public around 0.6/0.7; before that it lived in
    # jax.experimental.shard_map, which newer releases deprecate or drop.
    public = getattr(jax, "shard_map", None)
    if callable(public):
        return "jax.shard_map", public
    from jax.experimental.shard_map import shard_map as experimental

    return "jax.experimental.shard_map.shard_map", experimental


def _replication_check_keyword(function: Callable[..., Any]) -> Optional[str]:
    """The keyword that turns off shard_map's replication check, if any.

    Old releases call it `check_rep`, new ones `check_vma`. The thread needed
    it off because old linalg primitives had no replication rule.
    """
    try:
        parameters = inspect.signature(function).parameters
    except (TypeError, ValueError):
        return None
    for keyword in ("check_vma", "check_rep"):
        if keyword in parameters:
            return keyword
    return None


def shard_map(
    function: Callable[..., Any], mesh: Mesh, in_specs: Any, out_specs: Any
) -> Callable[..., Any]:
    """shard_map(function) over `mesh`, replication checks off, on any release."""
    _, implementation = _shard_map_function()
    keywords: Dict[str, Any] = {"mesh": mesh, "in_specs": in_specs, "out_specs": out_specs}
    check_keyword = _replication_check_keyword(implementation)
    if check_keyword is not None:
        keywords[check_keyword] = False
    return implementation(function, **keywords)


def shard_map_location() -> str:
    """Where shard_map was found, for the result's evidence."""
    path, implementation = _shard_map_function()
    keyword = _replication_check_keyword(implementation)
    return f"{path}({keyword}=False)" if keyword else path


def random_key(seed: int) -> Any:
    """A PRNG key: typed `jax.random.key` where it exists, else `PRNGKey`."""
    make_key = getattr(jax.random, "key", None)
    if callable(make_key):
        return make_key(seed)
    return jax.random.PRNGKey(seed)


def batch_mesh(devices: Sequence[Any], axis_name: str = "batch") -> Mesh:
    """A 1-D mesh over exactly these devices, in this order.

    `jax.make_mesh` may reorder devices for the physical topology, may not
    exist (before ~0.4.27) and in newer releases takes axis_types whose
    default may become Explicit sharding. The thread used a plain Mesh over
    the first k devices, and Mesh has kept that meaning in every release.
    """
    return Mesh(np.array(list(devices)), (axis_name,))


def block_until_ready(tree: Any) -> Any:
    """Wait for every array in a pytree; `jax.block_until_ready` is newer."""
    public = getattr(jax, "block_until_ready", None)
    if callable(public):
        return public(tree)
    for leaf in jax.tree_util.tree_leaves(tree):
        wait = getattr(leaf, "block_until_ready", None)
        if callable(wait):
            wait()
    return tree


def cost_analysis(compiled: Any) -> Dict[str, float]:
    """XLA's cost estimate as one flat dict (old releases return a list of one).

    Empty when the backend offers none: the figures are a nicety, not evidence.
    """
    try:
        analysis = compiled.cost_analysis()
    except Exception:  # some backends raise Unimplemented
        return {}
    if isinstance(analysis, (list, tuple)):
        analysis = analysis[0] if analysis else {}
    if not isinstance(analysis, dict):
        return {}
    return {str(key): float(value) for key, value in analysis.items() if _is_number(value)}


def _is_number(value: Any) -> bool:
    try:
        float(value)
    except (TypeError, ValueError):
        return False
    return True


def compiled_hlo_text(compiled: Any) -> str:
    """The optimised, partitioned HLO of a compiled computation as text.

    `as_text()` of a compiled object is the post-SPMD module in every release
    we cover; a list of modules (multi-module executables) is joined.
    """
    dump = os.environ.get("KIT_TARGET_DUMP")
    if dump:  # compiled for a GPU target: up to jax 0.6 its compile gives no text, XLA's dump has it
        from repro import target_devices

        return target_devices.after_text(compiled, dump)
    text = compiled.as_text()
    if isinstance(text, (list, tuple)):
        return "\n".join(str(part) for part in text)
    return str(text)


def memory_analysis_bytes(compiled: Any) -> Optional[int]:
    """What a compiled computation needs on its device: temporaries, arguments and outputs, from XLA's memory
    analysis; None where the release or backend offers none (no method, an exception, None, missing fields)."""
    try:
        analysis = compiled.memory_analysis()
    except Exception:  # unimplemented on some backends and releases
        return None
    if isinstance(analysis, (list, tuple)):  # multi-module executables in some releases
        analysis = analysis[0] if analysis else None
    fields = ("temp_size_in_bytes", "argument_size_in_bytes", "output_size_in_bytes")
    values = [getattr(analysis, name, None) for name in fields]
    if analysis is None or not all(_is_number(value) for value in values):
        return None
    return sum(int(float(value)) for value in values if value is not None)
