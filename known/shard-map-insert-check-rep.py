"""shard_map with its replication check on raised for jnp.insert(x, 0, 0)[None] in each shard: the check
mishandled a None in its replication sets (jax#24762).

100 zeros over 4 CPU host devices, each shard of 25 gets a 0 inserted and a leading axis. Exit 0: the
result comes out with shape (4, 26) and all zeros; 1: shard_map raises; 125: fewer than 4 devices, or
a release whose check has no rule for jnp.insert's cumsum at all (NotImplementedError: a different,
older limit, whose own TIP is check_rep=False), where the None case cannot be reached.
"""
import sys

import numpy as np
import jax
import jax.numpy as jnp
from jax.sharding import Mesh, PartitionSpec as P

try:
    from jax.experimental.shard_map import shard_map
except ImportError:  # newest releases: jax.shard_map only
    shard_map = jax.shard_map

if len(jax.devices()) < 4:
    print("needs 4 devices, has", len(jax.devices()))
    sys.exit(125)
mesh = Mesh(np.array(jax.devices()[:4]), ("i",))
f = shard_map(lambda x: jnp.insert(x, 0, 0)[None], mesh=mesh, in_specs=P("i"), out_specs=P("i"))
try:
    out = np.asarray(f(jnp.zeros(100)))
except NotImplementedError as exc:
    print(f"this release's replication check has no rule here, before the None case: {str(exc)[:120]}")
    sys.exit(125)
except Exception as exc:  # the failure is the bug, whatever its type
    print(f"shard_map raised {type(exc).__name__}: {str(exc).splitlines()[0][:200]}")
    sys.exit(1)
print("result shape", out.shape)
sys.exit(0 if out.shape == (4, 26) and not out.any() else 1)
