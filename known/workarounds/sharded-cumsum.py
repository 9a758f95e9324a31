"""The workaround of sharded-cumsum: gather the axis (jax.lax.with_sharding_constraint to replicated) before the
cumulative sum. The check's sharded arange(16) on 4 host devices; exit 0: numpy's cumsum; 1: not; 125: fewer than 4
devices.
"""
import sys

import numpy as np
import jax
import jax.numpy as jnp
from jax.sharding import Mesh, NamedSharding, PartitionSpec

if len(jax.devices()) < 4:
    print("needs 4 devices, has", len(jax.devices()))
    sys.exit(125)
mesh = Mesh(np.array(jax.devices()[:4]), ("x",))
x = jax.device_put(jnp.arange(16.0), NamedSharding(mesh, PartitionSpec("x")))
gathered = jax.jit(lambda v: jnp.cumsum(jax.lax.with_sharding_constraint(v, NamedSharding(mesh, PartitionSpec()))))
got = np.asarray(gathered(x))
print("gathered first: last of cumsum", got[-1], "numpy", np.cumsum(np.arange(16.0))[-1])
sys.exit(0 if np.allclose(got, np.cumsum(np.arange(16.0))) else 1)
