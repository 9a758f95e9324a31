"""jax.nn.standardize computed the variance as mean(x**2) - mean(x)**2, fast but cancelling: for rows
nearly constant against their mean it can come out below zero, and rsqrt(variance + epsilon) is then
NaN (jax#30426). c13c96b656 clips the variance at 0.

200 rows of 64 float32 values, 3000 plus noise of 1e-3 (a fixed seed), standardized along the last
axis in one call. Measured on CPU: NaN in several rows on 0.4.13 and 0.8.1, in none on 0.8.2.
Exit 0: every output is finite.
"""
import sys

import numpy as np
import jax
import jax.numpy as jnp

rows = (3000.0 + 1e-3 * np.random.default_rng(0).standard_normal((200, 64))).astype(np.float32)
out = np.asarray(jax.nn.standardize(jnp.asarray(rows), axis=-1))
bad = int((~np.isfinite(out)).any(axis=-1).sum())
print(f"jax.nn.standardize of 200 near-constant rows: {bad} rows hold NaN or inf")
sys.exit(0 if bad == 0 else 1)
