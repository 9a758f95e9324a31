"""vmap(jax.lax.linalg.householder_product) raised: the batching rule returned (0,) for a single output.

Two 4x4 matrices of reflectors with their taus (random); under vmap, each Q must be the product
of the reflectors I - tau v v^T (v: the column below the diagonal, unit on it), as numpy computes it.
Exit 0: it runs and agrees; 1: it raises (or disagrees).
"""
import sys

import numpy as np
import jax
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


try:
    got = np.asarray(jax.vmap(linalg.householder_product)(jnp.asarray(a), jnp.asarray(taus)))
except ValueError as error:
    print("vmap of householder_product raised:", str(error).splitlines()[0][:200])
    sys.exit(1)
expected = np.stack([reference(a[i].astype(np.float64), taus[i]) for i in range(2)])
print("largest difference from the product of the reflectors:", float(np.max(np.abs(got - expected))))
sys.exit(0 if np.allclose(got, expected, rtol=1e-4, atol=1e-5) else 1)
