"""A cumulative sum over a sharded axis came out wrong: XLA partitioned its concatenation incorrectly (jax#21403).

16 values on 4 CPU host devices, sharded along the summed axis, against numpy. Exit 0: the same.
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
got = np.asarray(jax.jit(jnp.cumsum)(x))
print("last of cumsum", got[-1], "numpy", np.cumsum(np.arange(16.0))[-1])
sys.exit(0 if np.allclose(got, np.cumsum(np.arange(16.0))) else 1)
