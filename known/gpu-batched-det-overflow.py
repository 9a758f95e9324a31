"""det of a batch past 2**31 bytes on GPU: the batched kernels' offsets overflowed and entries past the boundary
came out wrong (jax#24843, fixed in 0.4.36). The matrix's correctness check (repro/correctness.py) measures it
in full; this is its smallest form.

2**27 + 64 matrices of 2x2 float32 (2**31 bytes and 1 KiB): det of the matrices around the boundary against numpy's.
Exit 0: right; 1: wrong; 125: not a GPU, or the batch does not fit its memory.
"""
import sys

import numpy as np
import jax
import jax.numpy as jnp

if jax.default_backend() != "gpu":
    print(f"shows on GPU only (the batched cuSOLVER/cuBLAS kernels); this is {jax.default_backend()}")
    sys.exit(125)
BOUNDARY = 2**31 // (2 * 2 * 4)
rng = np.random.default_rng(0)
near = rng.standard_normal((128, 2, 2)).astype(np.float32)
try:
    batch = jnp.tile(jnp.eye(2, dtype=jnp.float32), (BOUNDARY + 64, 1, 1))
    batch = batch.at[BOUNDARY - 64:].set(jnp.asarray(near))
    got = np.asarray(jnp.linalg.det(batch)[BOUNDARY - 64:])
except Exception as exc:  # out of memory: this GPU cannot hold the batch
    print(f"the batch does not fit: {type(exc).__name__}: {str(exc).splitlines()[0][:160]}")
    sys.exit(125)
want = np.linalg.det(near.astype(np.float64))
bad = int(np.sum(~np.isclose(got, want, rtol=1e-4, atol=1e-5)))
print(f"det around the 2**31-byte boundary: {bad} of {len(want)} wrong")
sys.exit(1 if bad else 0)
