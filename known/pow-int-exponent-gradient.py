"""jax.grad of z ** n with an integer exponent array was wrong: d/dz sum(z ** [0, 1]) came out other than
1 (jax#17995, the power rule's derivative broken by jax#16419 for integer exponents).

d/dz (z**0 + z**1) = 1 at z = 3.14. Exit 0: JAX says 1.
"""
import sys

import jax
import jax.numpy as jnp

gradient = float(jax.grad(lambda z: jnp.sum(z ** jnp.arange(0, 2, dtype=int)))(3.14))
print("d/dz sum(z ** [0, 1]) at 3.14:", gradient, "(right: 1.0)")
sys.exit(0 if abs(gradient - 1.0) < 1e-5 else 1)
