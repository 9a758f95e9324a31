"""jax.scipy.stats.expon.ppf (new in jax 0.5.1) computed -log1p((loc - q) / scale), which is the
exponential's quantile only for loc=0 and scale=1; jax#36757 made it loc - scale * log1p(-q).

Compared at q = 0.1, 0.5, 0.9 with loc=1, scale=2 with the exponential's quantile in numpy,
loc - scale * log(1 - q): scipy.stats.expon.ppf's values there, 1.2107, 2.3863, 5.6052 (the wrong
formula gives negative quantiles, below loc). numpy, not scipy.stats, whose import alone takes seconds
of a shared audit. Exit 0: within rtol 1e-3 (the wrong formula is off by far more; on one TPU v5e, jax 0.10.2,
the fixed float32 values differed from float64's past rtol 1e-5, and the check called the fix present); 125: a release without expon.ppf, where it cannot show.
"""
import sys

import numpy as np

try:
    from jax.scipy.stats import expon
    ppf = expon.ppf
except (ImportError, AttributeError):
    print("this release has no jax.scipy.stats.expon.ppf (it came in jax 0.5.1)")
    sys.exit(125)

q = np.array([0.1, 0.5, 0.9], dtype=np.float32)
got = np.asarray(ppf(q, loc=1.0, scale=2.0))
want = 1.0 - 2.0 * np.log1p(-q.astype(np.float64))
print(f"expon.ppf(q, loc=1, scale=2): jax {np.round(got.astype(np.float64), 4).tolist()}, want {np.round(want, 4).tolist()}")
sys.exit(0 if np.allclose(got, want, rtol=1e-3) else 1)
