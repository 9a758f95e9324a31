"""jnp.pad of a 2-D array with constant_values=(before, after) filled the corners wrongly (jax#26888).

numpy pads one axis after the other, so a corner takes the value of the last axis padded; JAX padded
all "before" sides and then all "after" sides. Compared with numpy.pad. Exit 0: the same.
"""
import sys

import numpy as np
import jax.numpy as jnp

x = np.arange(4.0).reshape(2, 2)
got = np.asarray(jnp.pad(jnp.asarray(x), 1, constant_values=(-1.0, 9.0)))
want = np.pad(x, 1, constant_values=(-1.0, 9.0))
print("jax", got.tolist(), "numpy", want.tolist())
sys.exit(0 if np.array_equal(got, want) else 1)
