"""jax.grad(jnp.expm1) at large negative x was 0 in float32: the derivative was computed as
expm1(x) + 1, which cancels to 0 (the true derivative is exp(x), 2.06e-9 at x = -20).

Exit 0: the gradient at -20 is within 1% of numpy's exp(-20); 1: it is not (0 from the cancellation).
"""
import sys

import numpy as np
import jax
import jax.numpy as jnp

got = float(jax.grad(jnp.expm1)(np.float32(-20.0)))
want = float(np.exp(-20.0))
print(f"d/dx expm1(x) at -20 in float32: {got!r} (numpy exp(-20): {want!r})")
sys.exit(0 if abs(got - want) <= 0.01 * want else 1)
