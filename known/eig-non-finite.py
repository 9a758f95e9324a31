"""jnp.linalg.eig of a matrix holding NaN returned finite eigenvalues (or raised, or hung) (jax#18226).

The eigenvalues of a matrix with a NaN entry are not defined: the fix returns NaN for all of them. Exit 0: every
eigenvalue is NaN. The check's timeout catches a hang. Exit 125 where the backend has no eig at all (on one
TPU v5e, jax 0.10.2: "MLIR translation rule for primitive 'eig' not found for platform tpu").
"""
import sys

import numpy as np
import jax.numpy as jnp

a = np.array([[1.0, np.nan], [0.0, 2.0]], np.float32)
try:
    eigenvalues = np.asarray(jnp.linalg.eig(jnp.asarray(a))[0])
except NotImplementedError as exc:  # no eig on this backend (a TPU: "not found for platform tpu"): cannot tell
    print(f"{type(exc).__name__}: {exc}")
    sys.exit(125)
except Exception as exc:  # an error was one face of the problem
    print(f"{type(exc).__name__}: {exc}")
    sys.exit(1)
print("eigenvalues of a matrix holding NaN:", eigenvalues.tolist())
sys.exit(0 if np.isnan(eigenvalues).all() else 1)
