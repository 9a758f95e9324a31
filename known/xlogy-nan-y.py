"""jax.scipy.special.xlogy and xlog1py returned 0 wherever x == 0, even where y is NaN; scipy (and the
rule that NaN propagates) give NaN there. jax#37751, fixed by 60912d9674 (merged as jax#37915).

Compared with scipy.special.xlogy / xlog1py at (x, y) = (0, nan), (0, 2), (1, nan). Exit 0: both equal
scipy's, NaN where scipy has it.
"""
import sys

import numpy as np
import scipy.special
import jax.scipy.special as jsp

x = np.array([0.0, 0.0, 1.0], dtype=np.float32)
y = np.array([np.nan, 2.0, np.nan], dtype=np.float32)
same = True
for name in ("xlogy", "xlog1py"):
    got = np.asarray(getattr(jsp, name)(x, y))
    want = getattr(scipy.special, name)(x, y)
    print(f"{name}([0, 0, 1], [nan, 2, nan]): jax {got.tolist()}, scipy {want.tolist()}")
    same = same and np.array_equal(got, want, equal_nan=True)
sys.exit(0 if same else 1)
