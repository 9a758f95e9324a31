"""The workaround of cholesky-upper-lower-factor: jnp.linalg.cholesky(a).mT.conj(). Exit 0: the upper factor;
1: not."""
import sys

import numpy as np
import jax.numpy as jnp

a = np.array([[4.0, 2.0, 0.4], [2.0, 5.0, 1.0], [0.4, 1.0, 3.0]], dtype=np.float32)
expected = np.linalg.cholesky(a.astype(np.float64)).T
upper = np.asarray(jnp.linalg.cholesky(jnp.asarray(a)).mT.conj(), dtype=np.float64)
print("cholesky(a).mT.conj():", np.round(upper, 4).tolist())
sys.exit(0 if np.allclose(upper, expected, rtol=1e-5, atol=1e-6) else 1)
