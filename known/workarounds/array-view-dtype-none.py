"""The workaround of array-view-dtype-none: name the dtype, x.view(x.dtype). Exit 0: the int32 values back; 1: not.

x.view() with no dtype is not a workaround: it is the bug itself (dtype=None read as float32), measured on
jax 0.4.13, 0.6.1 and 0.7.1; it is printed here beside, not counted.
"""
import sys

import numpy as np
import jax.numpy as jnp

x = np.array([1, 2, 3], dtype=np.int32)
j = jnp.asarray(x)
named = j.view(j.dtype)
bare = j.view()
print(f"view(): {bare.dtype}; view(x.dtype): {named.dtype} {np.asarray(named).tolist()}")
sys.exit(0 if named.dtype == x.dtype and (np.asarray(named) == x).all() else 1)
