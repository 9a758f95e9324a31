"""How a module's inputs lie over the devices (which extents were split, which inputs replicated), and so the
state of a linalg op: split, whole, gathered, replicated or on one device."""

from __future__ import annotations

from repro.hlo_text import Module

from .fingerprint import Fingerprint, FingerprintState
from .instructions import elements


def linalg_state(fingerprint: Fingerprint, partitions: int, sharded: set[int]) -> FingerprintState:
    device, global_ = fingerprint.device_batch, fingerprint.global_batch
    if partitions <= 1:
        return FingerprintState.ONE_DEVICE
    if device is not None and global_ is not None and device < global_:
        return FingerprintState.SPLIT
    whole = device is not None and (device == global_ or (global_ is None and device in sharded))
    # An all-gather feeding the op is itself the proof that the batch was split: the kit's compile of an export
    # for a chip can take every argument replicated and split it inside (a `Sharding` call), so no parameter
    # looks sharded; the LU of the whole gathered batch was then "replicated" and the answer "every op split".
    if whole and (sharded or fingerprint.fed_by):
        return FingerprintState.GATHERED if fingerprint.fed_by else FingerprintState.WHOLE
    return FingerprintState.REPLICATED


def inputs(after: Module, before: Module | None) -> tuple[set[int], set[int], set[int]]:
    """The global extents of the dimensions the partitioner split, the element counts of replicated inputs, and
    the extents each device holds of the split dimensions.

    An entry parameter is sharded where its partitioned shape is smaller than
    its global one (no sharding syntax to parse: XLA's changed between releases).
    """
    local = _parameters(after)
    global_ = _parameters(before) if before else local
    sharded: set[int] = set()
    replicated: set[int] = set()
    shares: set[int] = set()
    for number, dims in global_.items():
        mine = local.get(number)
        if mine is None or len(mine) != len(dims):
            continue
        shrunk = [g for g, m in zip(dims, mine) if m < g]
        sharded |= set(shrunk)
        shares |= {m for g, m in zip(dims, mine) if m < g}
        if not shrunk:
            replicated.add(elements(dims))
    return sharded, replicated, shares


def _parameters(module: Module) -> dict[int, tuple[int, ...]]:
    entry = module.entry
    if entry is None:
        return {}
    return {i.parameter: i.arrays[0].dims for i in entry.instructions.values()
            if i.opcode == "parameter" and i.parameter is not None and len(i.arrays) == 1}
