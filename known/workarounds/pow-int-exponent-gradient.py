"""The workaround of pow-int-exponent-gradient: a float exponent. Exit 0: d/dz sum(z ** [0., 1.]) at 3.14 is 1."""
import sys

import jax
import jax.numpy as jnp

gradient = float(jax.grad(lambda z: jnp.sum(z ** jnp.arange(0, 2, dtype=float)))(3.14))
print("d/dz sum(z ** [0., 1.]) at 3.14:", gradient, "(right: 1.0)")
sys.exit(0 if abs(gradient - 1.0) < 1e-5 else 1)
