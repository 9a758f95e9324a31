"""The workaround of pad-two-constants: pad one axis at a time. Exit 0: numpy's pad of the check's input; 1: not."""
import sys

import numpy as np
import jax.numpy as jnp

x = np.arange(4.0).reshape(2, 2)
step = jnp.pad(jnp.asarray(x), ((1, 1), (0, 0)), constant_values=(-1.0, 9.0))
got = np.asarray(jnp.pad(step, ((0, 0), (1, 1)), constant_values=(-1.0, 9.0)))
want = np.pad(x, 1, constant_values=(-1.0, 9.0))
print("one axis at a time: jax", got.tolist(), "numpy", want.tolist())
sys.exit(0 if np.array_equal(got, want) else 1)
