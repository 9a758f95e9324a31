"""On TPU a batch-sharded lu, solve, inv or slogdet is all-gathered: every chip's LU (LuDecompositionBlock,
LuRealDecompositionBlock in 0.12) factorises the whole batch. Compiled for the target's compile-only devices, not
run (repro.known_target).

1024 8x8 matrices sharded over the chips; the TPU compiler's LU custom call must hold 1024 / chips, not 1024.
Each of the four ops is compiled, and for each the batch every LU call holds per chip and the module's
all-gathers are printed. The workaround, shard_map (each chip's op on its own part), is compiled beside each and
its LU batch printed.
Exit 0: split; 1: an LU call holds more than its chip's part; 125: no TPU compiler, or no LU call compiled.
"""
import sys

from repro import known_target

target = known_target.begin()  # before jax: libtpu reads its settings at import

import numpy as np
import jax
import jax.numpy as jnp
from jax.sharding import Mesh, NamedSharding, PartitionSpec

from repro import compat

BATCH = 1024
devices = known_target.devices(jax, target)
mesh = Mesh(np.array(devices), ("batch",))
x = jax.ShapeDtypeStruct((BATCH, 8, 8), jnp.float32, sharding=NamedSharding(mesh, PartitionSpec("batch")))
where = known_target.not_run(target)
PART = BATCH // len(devices)


def lu(a):
    return jax.lax.linalg.lu(a)[0]


def solve(a):  # one right-hand side per matrix, sharded with it
    return jnp.linalg.solve(a, a[..., :1])


def inv(a):
    return jnp.linalg.inv(a)


def slogdet(a):
    return jnp.linalg.slogdet(a)[1]


said, held = [], []
for name, function in (("lu", lu), ("solve", solve), ("inv", inv), ("slogdet", slogdet)):
    calls, gathers = known_target.held_by_calls(jax, function, [x], ("lu",))
    if not calls:
        said.append(f"{name}: no LU call compiled")
        continue
    mapped = compat.shard_map(function, mesh, PartitionSpec("batch"), PartitionSpec("batch"))
    workaround, _ = known_target.held_by_calls(jax, mapped, [x], ("lu",))
    held += [batch for _kind, _target, batch in calls]
    said.append(f"{name}: {known_target.said_calls(calls, BATCH)} per chip ({gathers} all-gather(s)); under "
                f"shard_map (the workaround): {', '.join(str(batch) for _k, _t, batch in workaround)} per chip")
if not held:
    print(f"{where}: {'; '.join(said)}, so this check cannot tell")
    sys.exit(125)
print(f"{where}: {'; '.join(said)}")
sys.exit(0 if set(held) == {PART} else 1)
