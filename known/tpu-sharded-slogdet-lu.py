"""On TPU a batch-sharded slogdet is all-gathered: every chip's LU (LuDecompositionBlock, LuRealDecompositionBlock
in 0.12) factorises the whole batch. Compiled for the target's compile-only devices, not run (repro.known_target).

1024 8x8 matrices sharded over the chips; the TPU compiler's LU custom call must hold 1024 / chips, not 1024.
The workaround, shard_map (each chip's slogdet on its own part), is compiled beside it and its LU batch printed.
Exit 0: split; 1: every chip factorises the whole batch; 125: no TPU compiler here.
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


def slogdet(a):
    return jnp.linalg.slogdet(a)[1]


held, names, gathers = known_target.batches(jax, slogdet, x, "lu")
if not held:
    print(f"{where}: no LU custom call in the compiled program, so this check cannot tell")
    sys.exit(125)
mapped = compat.shard_map(slogdet, mesh, PartitionSpec("batch"), PartitionSpec("batch"))
workaround = known_target.batches(jax, mapped, x, "lu")[0]
print(f"{where}: jit: {', '.join(names)} on {', '.join(map(str, held))} of {BATCH} matrices per chip "
      f"({gathers} all-gather(s)); under shard_map (the workaround): {', '.join(map(str, workaround))} per chip")
sys.exit(0 if held == [BATCH // len(devices)] else 1)
