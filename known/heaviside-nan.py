"""jnp.heaviside(x1, x2) chose 0 below zero, 1 above and x2 otherwise, so a NaN x1 (neither below nor
above) came out as x2; numpy gives NaN there. jax#38106 (88b3d13390) passes the NaN through.

Compared with numpy.heaviside on [nan, -1, 0, 2] with x2 = 0.5. Exit 0: equal, NaN where numpy has it.
"""
import sys

import numpy as np
import jax.numpy as jnp

x1 = np.array([np.nan, -1.0, 0.0, 2.0], dtype=np.float32)
got = np.asarray(jnp.heaviside(x1, np.float32(0.5)))
want = np.heaviside(x1, np.float32(0.5))
print(f"heaviside([nan, -1, 0, 2], 0.5): jax {got.tolist()}, numpy {want.tolist()}")
sys.exit(0 if np.array_equal(got, want, equal_nan=True) else 1)
