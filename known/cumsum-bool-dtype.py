"""jnp.cumsum(x, dtype=bool) on a non-boolean input summed first and cast after; numpy casts first (logical or).

[1, -1, 0, 2]: numpy gives True from the first element on; summing first gives False where a partial sum is 0.
Exit 0: as numpy. A release that refuses dtype=bool (TypeError) cannot show it: 125.
"""
import sys

import numpy as np
import jax.numpy as jnp

x = np.array([1, -1, 0, 2, -2, 0], dtype=np.int32)
try:
    got = np.asarray(jnp.cumsum(jnp.asarray(x), dtype=bool))
except TypeError as exc:
    print(f"TypeError: {exc}")
    sys.exit(125)
want = np.cumsum(x, dtype=bool)
print("jax", got.tolist(), "numpy", want.tolist())
sys.exit(0 if (got == want).all() else 1)
