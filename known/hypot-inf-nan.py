"""jnp.hypot(a, b) scaled by max(|a|, |b|) and gave NaN whenever one side was NaN, even where the other
is infinite; numpy.hypot (C99's rule) gives inf there. jax#20754 (2899213efb) returns inf.

Compared with numpy.hypot at (inf, nan), (nan, inf), (-inf, nan), (3, 4). Exit 0: equal, NaN only
where numpy has it.
"""
import sys

import numpy as np
import jax.numpy as jnp

a = np.array([np.inf, np.nan, -np.inf, 3.0], dtype=np.float32)
b = np.array([np.nan, np.inf, np.nan, 4.0], dtype=np.float32)
got = np.asarray(jnp.hypot(a, b))
want = np.hypot(a, b)
print(f"hypot at (inf, nan), (nan, inf), (-inf, nan), (3, 4): jax {got.tolist()}, numpy {want.tolist()}")
sys.exit(0 if np.array_equal(got, want, equal_nan=True) else 1)
