"""The workaround of isclose-integer-tolerance: cast to float first. Exit 0: numpy's answer on the check's
integers; 1: not. (float32 cannot tell 10**9 from 10**9 + 1: numpy's float64 answer is the reference.)"""
import sys

import numpy as np
import jax.numpy as jnp

a = np.array([0, 2, 10**9], dtype=np.int32)
b = np.array([1, 2, 10**9 + 1], dtype=np.int32)
got = np.asarray(jnp.isclose(jnp.asarray(a).astype(float), jnp.asarray(b).astype(float))).tolist()
want = np.isclose(a, b).tolist()
print("cast to float first: jax", got, "numpy", want)
sys.exit(0 if got == want else 1)
