"""The workaround of singular-triangular-solve: check the diagonal for zeros before solving.

The check's batch of singular triangular matrices: the guard jnp.any(jnp.diagonal(a, axis1=-2, axis2=-1) == 0)
must flag every one (the solve's finite answer is then never used). Exit 0: it flags all 8; 1: not.
"""
import sys

import numpy as np
import jax.numpy as jnp

a = np.tile(np.triu(np.ones((4, 4), np.float32)), (8, 1, 1))
a[:, 2, 2] = 0.0
flagged = np.asarray(jnp.any(jnp.diagonal(jnp.asarray(a), axis1=-2, axis2=-1) == 0, axis=-1))
print(f"the diagonal guard flags {int(flagged.sum())} of 8 singular matrices")
sys.exit(0 if flagged.all() else 1)
