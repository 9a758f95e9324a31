"""x.view(dtype=None) reinterpreted the array as float instead of returning it unchanged.

numpy's documented meaning of a view without a dtype is the same dtype. An int32 array [1, 2, 3]
viewed with dtype=None: exit 0 when it comes back int32 with the same values, 1 when it is
reinterpreted (or refused with a ValueError on the bytes), 125 when .view refuses dtype=None (TypeError).
"""
import sys

import numpy as np
import jax.numpy as jnp

x = np.array([1, 2, 3], dtype=np.int32)
try:
    got = jnp.asarray(x).view(dtype=None)
except TypeError as exc:
    print(f"TypeError: {exc}")
    sys.exit(125)
except ValueError as exc:
    print(f"reinterpreted as another dtype and refused: {exc}")
    sys.exit(1)
print("view(dtype=None) of int32 [1, 2, 3]:", got.dtype, np.asarray(got).tolist())
sys.exit(0 if got.dtype == x.dtype and (np.asarray(got) == x).all() else 1)
