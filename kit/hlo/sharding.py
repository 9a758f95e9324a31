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


def extents(after: Module, before: Module | None) -> tuple[set[int], set[int]]:
    """The global extents a module's partitioner split, and every extent of its entry parameters' global shapes."""
    return inputs(after, before)[0], {d for dims in _parameters(before or after).values() for d in dims}


def whole_where_the_program_shards(modules: list[tuple[tuple[set[int], set[int]], list[Fingerprint]]]) -> None:
    """A "replicated" op made "whole" where its module takes an extent another module of the program splits.

    Each module is given as its `extents` and its fingerprints. A module whose inputs came in replicated (its
    caller gathered them) computes the whole batch on every device as surely as one that gathers inside: t9's
    ``compress`` on 0.4.35 took ``step``'s output f32[256,8,4] whole, so its svd was "replicated" there and "whole"
    on 0.5.3, and the console's list of ops that hold the whole batch left it out. An op of a program that splits
    nothing stays replicated, and so does one of a module whose inputs hold no extent the program splits."""
    split = {extent for (sharded, _), _ in modules for extent in sharded}
    for (sharded, held), prints in modules:
        if sharded or not split & held:
            continue
        for fingerprint in prints:
            if fingerprint.state == FingerprintState.REPLICATED:
                fingerprint.state = FingerprintState.WHOLE


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
