"""jax.jacrev of jnp.frexp's mantissa on a sharded array raised: the tangent was built with np.empty and
lost the input's sharding (jax#30531).

8 values sharded over 4 CPU host devices. d(mantissa)/dx = 2**-exponent on the diagonal. Exit 0: the
Jacobian comes out and matches that; 1: it raises or differs; 125: fewer than 4 devices, or a release
whose frexp has no derivative at all even unsharded (that is frexp-zero-gradient, before 0.6.1).
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
values = np.array([1.0, 3.0, 0.5, 6.0, 10.0, 0.25, 7.0, 2.0], dtype=np.float32)
unsharded = np.asarray(jax.jacrev(lambda v: jnp.frexp(v)[0])(values))
if not np.allclose(np.diag(unsharded), np.ldexp(1.0, -np.frexp(values)[1])):
    print("frexp has no derivative here even unsharded (frexp-zero-gradient): cannot show the sharded failure")
    sys.exit(125)
x = jax.device_put(values, NamedSharding(mesh, PartitionSpec("x")))
try:
    jacobian = np.asarray(jax.jacrev(lambda v: jnp.frexp(v)[0])(x))
except Exception as exc:  # the failure is the bug, whatever its type
    print(f"jacrev raised {type(exc).__name__}: {str(exc).splitlines()[0][:200]}")
    sys.exit(1)
want = np.diag(np.ldexp(1.0, -np.frexp(values)[1]))
print("diagonal", np.diag(jacobian).tolist(), "want", np.diag(want).tolist())
sys.exit(0 if np.allclose(jacobian, want) else 1)
