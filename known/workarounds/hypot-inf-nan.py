"""The workaround of hypot-inf-nan: jnp.where(jnp.isinf(a) | jnp.isinf(b), jnp.inf, jnp.hypot(a, b)). Exit 0:
numpy's answer at the check's pairs; 1: not."""
import sys

import numpy as np
import jax.numpy as jnp

a = np.array([np.inf, np.nan, -np.inf, 3.0], dtype=np.float32)
b = np.array([np.nan, np.inf, np.nan, 4.0], dtype=np.float32)
ja, jb = jnp.asarray(a), jnp.asarray(b)
got = np.asarray(jnp.where(jnp.isinf(ja) | jnp.isinf(jb), jnp.inf, jnp.hypot(ja, jb)))
want = np.hypot(a, b)
print(f"with the where: jax {got.tolist()}, numpy {want.tolist()}")
sys.exit(0 if np.array_equal(got, want, equal_nan=True) else 1)
