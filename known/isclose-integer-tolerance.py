"""jnp.isclose on integer arrays ignored rtol/atol: it compared the integers exactly, so 10**9 and
10**9 + 1 were "not close" where numpy (promoting to float) says close (jax#19935).

Compared with numpy.isclose on int32 [0, 2, 10**9] against [1, 2, 10**9 + 1]. Exit 0: the same.
"""
import sys

import numpy as np
import jax.numpy as jnp

a = np.array([0, 2, 10**9], dtype=np.int32)
b = np.array([1, 2, 10**9 + 1], dtype=np.int32)
got = np.asarray(jnp.isclose(a, b)).tolist()
want = np.isclose(a, b).tolist()
print("jax", got, "numpy", want)
sys.exit(0 if got == want else 1)
