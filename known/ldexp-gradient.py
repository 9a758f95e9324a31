"""The gradient of jnp.ldexp(x, n) with respect to x was 0 instead of 2**n.

d/dx ldexp(x, 3) = 8 everywhere. Exit 0: JAX says 8.
"""
import sys

import jax
import jax.numpy as jnp

gradient = float(jax.grad(lambda x: jnp.ldexp(x, 3))(1.5))
print("d/dx ldexp(x, 3) at 1.5:", gradient, "(right: 8.0)")
sys.exit(0 if abs(gradient - 8.0) < 1e-6 else 1)
