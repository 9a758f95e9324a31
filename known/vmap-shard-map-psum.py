"""vmap(shard_map(psum)) raised TypeError: with shard_map's varying-manual-axes check on (check_vma, the
default), psum's batching rule passed axis_index_groups to psum_invariant, a primitive that has no
such parameter (jax#34249, fixed by 09c3f1c923). check_vma=False ran it on 0.8.1 and 0.8.2.

Two rows of 400 over 4 CPU host devices, each psum'd over the mesh axis under vmap. Exit 0: the
result is 4x and 8x ones of shape (2, 100), as numpy says; 1: it raises or differs; 125: fewer than
4 devices.
"""
import sys

import numpy as np
import jax
import jax.numpy as jnp
from jax.sharding import Mesh, PartitionSpec as P

if hasattr(jax, "shard_map"):
    shard_map = jax.shard_map
else:  # releases before jax.shard_map
    from jax.experimental.shard_map import shard_map

if len(jax.devices()) < 4:
    print("needs 4 devices, has", len(jax.devices()))
    sys.exit(125)
mesh = Mesh(np.array(jax.devices()[:4]), ("x",))
total = shard_map(lambda v: jax.lax.psum(v, "x"), mesh=mesh, in_specs=P("x"), out_specs=P(None))
rows = jnp.stack([jnp.ones(400), 2 * jnp.ones(400)])
try:
    out = np.asarray(jax.vmap(total)(rows))
except Exception as exc:  # the failure is the bug, whatever its type
    print(f"vmap of shard_map(psum) raised {type(exc).__name__}: {str(exc).splitlines()[0][:200]}")
    sys.exit(1)
want = np.stack([4 * np.ones(100), 8 * np.ones(100)])
print(f"vmap of shard_map(psum): shape {out.shape}, first column {out[:, 0].tolist()}")
sys.exit(0 if out.shape == want.shape and np.allclose(out, want) else 1)
