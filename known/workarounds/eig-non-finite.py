"""The workaround of eig-non-finite: check jnp.isfinite(a).all() before eig. The check's matrix holding a NaN must be
flagged by the guard (eig is then not called). Exit 0: it is flagged; 1: not.
"""
import sys

import numpy as np
import jax.numpy as jnp

a = np.array([[1.0, np.nan], [0.0, 2.0]], np.float32)
finite = bool(jnp.isfinite(jnp.asarray(a)).all())
print("jnp.isfinite(a).all() on a matrix holding NaN:", finite)
sys.exit(0 if not finite else 1)
