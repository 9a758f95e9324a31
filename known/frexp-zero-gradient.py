"""jax.grad of jnp.frexp's mantissa was 0: frexp had no derivative rule, so the mantissa x * 2**-e
differentiated as a constant.

The mantissa of x is x * 2**-e with e piecewise constant, so its derivative is 2**-e (0.25 at x = 3).
Exit 0: JAX says so.
"""
import sys

import numpy as np
import jax
import jax.numpy as jnp

values = np.array([3.0, 0.5, 10.0], dtype=np.float32)
got = np.asarray(jax.vmap(jax.grad(lambda v: jnp.frexp(v)[0]))(values))
want = np.ldexp(1.0, -np.frexp(values)[1])
print("d mantissa / dx at", values.tolist(), ":", got.tolist(), "want", want.tolist())
sys.exit(0 if np.allclose(got, want) else 1)
