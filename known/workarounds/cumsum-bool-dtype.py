"""The workaround of cumsum-bool-dtype: cast first, jnp.cumsum(x != 0, dtype=bool), or jnp.logical_or.accumulate.

The check's inputs (int32, int8, float32) through both forms; logical_or.accumulate only where the release has
it (jnp's ufuncs came later than 0.4.13: said when missing). Exit 0: every form there gives numpy's answer; 1: one
does not.
"""
import sys

import numpy as np
import jax.numpy as jnp

bad, missing = [], ""
for dtype in (np.int32, np.int8, np.float32):
    x = np.array([1, -1, 0, 2, -2, 0], dtype=dtype)
    want = np.cumsum(x, dtype=bool)
    got = np.asarray(jnp.cumsum(jnp.asarray(x) != 0, dtype=bool))
    if not (got == want).all():
        bad.append(f"cumsum(x != 0, dtype=bool) on {np.dtype(dtype).name}: {got.tolist()}, numpy {want.tolist()}")
    accumulate = getattr(getattr(jnp.logical_or, "accumulate", None), "__call__", None)
    if accumulate is None:
        missing = " (jnp.logical_or.accumulate is not in this release)"
        continue
    got = np.asarray(jnp.logical_or.accumulate(jnp.asarray(x)))
    if not (got == want).all():
        bad.append(f"logical_or.accumulate on {np.dtype(dtype).name}: {got.tolist()}, numpy {want.tolist()}")
print(bad[0] if bad else f"the workaround gives numpy's answer on int32, int8, float32{missing}")
sys.exit(1 if bad else 0)
