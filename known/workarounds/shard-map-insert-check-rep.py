"""The workaround of shard-map-insert-check-rep: pass check_rep=False to shard_map. The check's insert on 4 host
devices; exit 0: a (4, 26) array of zeros; 1: it raises or differs; 125: fewer than 4 devices, or no check_rep."""
import inspect
import sys

import numpy as np
import jax
import jax.numpy as jnp
from jax.sharding import Mesh, PartitionSpec as P

try:
    from jax.experimental.shard_map import shard_map
except ImportError:
    shard_map = jax.shard_map
if len(jax.devices()) < 4:
    print("needs 4 devices, has", len(jax.devices()))
    sys.exit(125)
if "check_rep" not in inspect.signature(shard_map).parameters:
    print("this release's shard_map has no check_rep")
    sys.exit(125)
mesh = Mesh(np.array(jax.devices()[:4]), ("i",))
f = shard_map(lambda x: jnp.insert(x, 0, 0)[None], mesh=mesh, in_specs=P("i"), out_specs=P("i"), check_rep=False)
try:
    out = np.asarray(f(jnp.zeros(100)))
except Exception as exc:
    print(f"with check_rep=False, shard_map raised {type(exc).__name__}: {str(exc).splitlines()[0][:200]}")
    sys.exit(1)
print("with check_rep=False: result shape", out.shape)
sys.exit(0 if out.shape == (4, 26) and not out.any() else 1)
