"""Triangular solves of a batch of singular matrices give finite nonsense instead of inf or nan (jax#15429).

A zero on the diagonal makes the system singular; scipy's and LAPACK's answer is not finite. Exit 0: JAX's is not
finite either.
"""
import sys

import numpy as np
import jax.numpy as jnp
from jax.scipy.linalg import solve_triangular

a = np.tile(np.triu(np.ones((4, 4), np.float32)), (8, 1, 1))
a[:, 2, 2] = 0.0
b = np.ones((8, 4, 1), np.float32)
x = np.asarray(solve_triangular(jnp.asarray(a), jnp.asarray(b), lower=False))
print("first solution", x[0].ravel())
sys.exit(0 if not np.isfinite(x).all() else 1)
