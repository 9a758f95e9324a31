"""On GPUs a batch-sharded solve split its LU but all-gathered the triangular solves after it: every GPU's two
cuBLAS triangular solves took the whole batch. Compiled for the target's compile-only devices, not run
(repro.known_target).

1024 8x8 systems (and their 1024 right-hand sides) sharded over the GPUs, solved by jnp.linalg.solve and by
jax.scipy.linalg.lu_solve after lu_factor; the getrf and each triangular solve must hold 1024 / GPUs, not 1024.
Per op, each call's batch per GPU and the module's all-gathers are printed. Where the release has the Shardy
partitioner off by default (before 0.7.0), the workaround, Shardy switched on, is compiled beside and its
batches printed.
Exit 0: split; 1: the getrf or a triangular solve holds more than its GPU's part; 125: no CUDA plugin, or no
such call compiled.
"""
import sys

from repro import known_target

target = known_target.begin()  # before jax: the CUDA plugin reads its settings at import

import numpy as np
import jax
import jax.numpy as jnp
import jax.scipy.linalg
from jax.sharding import Mesh, NamedSharding, PartitionSpec

BATCH = 1024
devices = known_target.devices(jax, target)
mesh = Mesh(np.array(devices), ("batch",))
sharded = NamedSharding(mesh, PartitionSpec("batch"))
a = jax.ShapeDtypeStruct((BATCH, 8, 8), jnp.float32, sharding=sharded)
b = jax.ShapeDtypeStruct((BATCH, 8, 1), jnp.float32, sharding=sharded)
where = known_target.not_run(target)
PART = BATCH // len(devices)
KINDS = ("lu", "triangular_solve")
SHARDY = "jax_use_shardy_partitioner"  # the flag from 0.4.3x; on by default from 0.7.0 (df8e17a549)


def solve(m, y):
    return jnp.linalg.solve(m, y)


def lu_solve(m, y):
    return jax.scipy.linalg.lu_solve(jax.scipy.linalg.lu_factor(m), y)


shardy_off = hasattr(jax.config, SHARDY) and not getattr(jax.config, SHARDY)
said, held = [], []
for name, function in (("solve", solve), ("lu_solve", lu_solve)):
    calls, gathers = known_target.held_by_calls(jax, function, [a, b], KINDS)
    if not calls:
        said.append(f"{name}: no getrf or triangular solve compiled")
        continue
    held += [batch for _kind, _target, batch in calls]
    line = f"{name}: {known_target.said_calls(calls, BATCH)} per GPU ({gathers} all-gather(s))"
    if shardy_off:  # the workaround: the partitioner that knows how to split the triangular solves
        jax.config.update(SHARDY, True)
        workaround, after = known_target.held_by_calls(jax, function, [a, b], KINDS)
        jax.config.update(SHARDY, False)
        line += f"; with {SHARDY}=True (the workaround): {known_target.said_calls(workaround, BATCH)} ({after} all-gather(s))"
    said.append(line)
if not held:
    print(f"{where}: {'; '.join(said)}, so this check cannot tell")
    sys.exit(125)
print(f"{where}: {'; '.join(said)}")
sys.exit(0 if set(held) == {PART} else 1)
