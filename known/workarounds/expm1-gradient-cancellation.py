"""The workaround of expm1-gradient-cancellation: a custom_jvp whose tangent is jnp.exp(x) * t.

The check's points (expm1 at -20 and -30 in float32) through the workaround's function. Exit 0: each gradient is
within 1% of numpy's exp(x); 1: one is not.
"""
import sys

import numpy as np
import jax
import jax.numpy as jnp


@jax.custom_jvp
def expm1(x):
    return jnp.expm1(x)


@expm1.defjvp
def _expm1_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    return jnp.expm1(x), jnp.exp(x) * t


bad = []
for x in (-20.0, -30.0):
    got, want = float(jax.grad(expm1)(np.float32(x))), float(np.exp(x))
    if not abs(got - want) <= 0.01 * want:
        bad.append(f"d/dx expm1 (custom_jvp) at {x}: {got!r}, numpy exp: {want!r}")
print(bad[0] if bad else "custom_jvp expm1: the gradient at -20 and -30 is exp(x) within 1%")
sys.exit(1 if bad else 0)
