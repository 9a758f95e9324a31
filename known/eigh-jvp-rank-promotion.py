"""The JVP of a batched eigh raised under jax_numpy_rank_promotion='raise' (the rule's own broadcasting).

Ten symmetric 3x3 matrices, their eigh differentiated forward with the matrices as tangents. Where it runs, the
eigenvalues' tangents must be diag(V^T dA V), as first-order perturbation theory gives them (numpy).
Exit 0: it runs and agrees; 1: it raises (or disagrees). Isolated: it changes JAX's configuration.
"""
import sys

import numpy as np
import jax
import jax.numpy as jnp

a = np.random.RandomState(0).randn(10, 3, 3).astype(np.float32)
a = a + np.swapaxes(a, -1, -2)
jax.config.update("jax_numpy_rank_promotion", "raise")
try:
    (w, v), (dw, _dv) = jax.jvp(jnp.linalg.eigh, (a,), (a,))
except ValueError as error:
    print("the JVP of a batched eigh raised:", str(error).splitlines()[0][:200])
    sys.exit(1)
vectors = np.linalg.eigh(a.astype(np.float64))[1]
expected = np.einsum("bij,bjk,bki->bi", np.swapaxes(vectors, -1, -2), a, vectors)
print("eigenvalue tangents, largest difference from diag(V^T dA V):", float(np.max(np.abs(dw - expected))))
sys.exit(0 if np.allclose(dw, expected, rtol=1e-3, atol=1e-3) else 1)
