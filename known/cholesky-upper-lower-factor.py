"""jnp.linalg.cholesky(a, upper=True) gave the lower factor: `upper` transposed the input, not the result.

A symmetric positive definite 3x3 matrix; the upper factor U must be upper triangular with U^H U = a, as
numpy's cholesky transposed gives it. Exit 0: it is; 1: not; 125: this release has no `upper` argument.
"""
import sys

import numpy as np
import jax.numpy as jnp

a = np.array([[4.0, 2.0, 0.4], [2.0, 5.0, 1.0], [0.4, 1.0, 3.0]], dtype=np.float32)
expected = np.linalg.cholesky(a.astype(np.float64)).T
try:
    upper = np.asarray(jnp.linalg.cholesky(a, upper=True), dtype=np.float64)
except TypeError as error:
    print(f"this release's cholesky has no upper argument ({error}), so it cannot show the problem")
    sys.exit(125)
print("upper=True gave:", np.round(upper, 4).tolist(), "expected:", np.round(expected, 4).tolist())
sys.exit(0 if np.allclose(upper, expected, rtol=1e-5, atol=1e-6) else 1)
