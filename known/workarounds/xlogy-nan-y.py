"""The workaround of xlogy-nan-y: jnp.where(jnp.isnan(y), jnp.nan, xlogy(x, y)), the same for xlog1py. Exit 0:
scipy's answer for both; 1: not."""
import sys

import numpy as np
import scipy.special
import jax.numpy as jnp
import jax.scipy.special as jsp

x = np.array([0.0, 0.0, 1.0], dtype=np.float32)
y = np.array([np.nan, 2.0, np.nan], dtype=np.float32)
same = True
for name in ("xlogy", "xlog1py"):
    jy = jnp.asarray(y)
    got = np.asarray(jnp.where(jnp.isnan(jy), jnp.nan, getattr(jsp, name)(jnp.asarray(x), jy)))
    want = getattr(scipy.special, name)(x, y)
    print(f"{name} with the where: jax {got.tolist()}, scipy {want.tolist()}")
    same = same and np.array_equal(got, want, equal_nan=True)
sys.exit(0 if same else 1)
