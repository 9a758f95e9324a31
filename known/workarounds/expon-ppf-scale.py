"""The workaround of expon-ppf-scale: compute it yourself, loc - scale * jnp.log1p(-q), or expon.ppf(q) * scale + loc.
Exit 0: both give the right quantiles; 1: not."""
import sys

import numpy as np
import jax.numpy as jnp
from jax.scipy.stats import expon

q = np.array([0.1, 0.5, 0.9], dtype=np.float32)
want = 1.0 - 2.0 * np.log1p(-q.astype(np.float64))
bad = []
for name, got in (("loc - scale * log1p(-q)", 1.0 - 2.0 * jnp.log1p(-jnp.asarray(q))),
                  ("expon.ppf(q) * scale + loc", expon.ppf(jnp.asarray(q)) * 2.0 + 1.0)):
    if not np.allclose(np.asarray(got), want, rtol=1e-3):
        bad.append(f"{name}: {np.asarray(got).tolist()}, want {want.tolist()}")
print(bad[0] if bad else "both forms give the quantiles of expon(loc=1, scale=2)")
sys.exit(1 if bad else 0)
