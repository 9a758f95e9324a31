"""The workaround of householder-product-vmap: call it on the batch directly instead of under vmap. The check's two
4x4 reflector sets; exit 0: the product of the reflectors; 1: not."""
import sys

import numpy as np
import jax.numpy as jnp
from jax.lax import linalg

rng = np.random.RandomState(0)
a = rng.randn(2, 4, 4).astype(np.float32)
taus = rng.uniform(0.2, 1.0, (2, 4)).astype(np.float32)


def reference(reflectors, tau):
    q = np.eye(4)
    for i in range(4):
        v = np.zeros(4)
        v[i] = 1.0
        v[i + 1:] = reflectors[i + 1:, i]
        q = q @ (np.eye(4) - tau[i] * np.outer(v, v))
    return q


got = np.asarray(linalg.householder_product(jnp.asarray(a), jnp.asarray(taus)))
expected = np.stack([reference(a[i].astype(np.float64), taus[i]) for i in range(2)])
print("on the batch directly, largest difference:", float(np.max(np.abs(got - expected))))
sys.exit(0 if np.allclose(got, expected, rtol=1e-4, atol=1e-5) else 1)
