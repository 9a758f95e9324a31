"""jnp.cumsum(x, dtype=bool) on a non-boolean input summed first and cast after; numpy casts first (logical or).

[1, -1, 0, 2, -2, 0]: numpy gives True from the first element on; summing first gives False where a partial sum
is 0. The fix's own test (9d7ed1b0aa, jax#37991) tries int8, int32 and float32 inputs; so does this (the bug's
class: any input dtype whose partial sums can cancel), and jnp.cumulative_sum where the release has it.
Exit 0: as numpy for every one. A release that refuses dtype=bool (TypeError) cannot show it: 125.
"""
import sys

import numpy as np
import jax.numpy as jnp

values = [1, -1, 0, 2, -2, 0]
bad = []
for dtype in (np.int32, np.int8, np.float32):
    x = np.array(values, dtype=dtype)
    want = np.cumsum(x, dtype=bool)
    try:
        got = np.asarray(jnp.cumsum(jnp.asarray(x), dtype=bool))
    except TypeError as exc:
        print(f"TypeError: {exc}")
        sys.exit(125)
    if not (got == want).all():
        bad.append(f"cumsum({np.dtype(dtype).name}, dtype=bool): jax {got.tolist()}, numpy {want.tolist()}")
print(bad[0] if bad else "cumsum(int32, int8, float32, dtype=bool) as numpy's")
sys.exit(1 if bad else 0)
