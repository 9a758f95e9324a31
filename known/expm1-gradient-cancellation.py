"""jax.grad(jnp.expm1) at large negative x was 0 in float32: the derivative was computed as
expm1(x) + 1, which cancels to 0 (the true derivative is exp(x), 2.06e-9 at x = -20).

The bug's class is every x where expm1(x) rounds to -1 (below about -17 in float32), and every function whose
gradient goes through expm1's rule: jax.nn.elu's negative branch is alpha * expm1(x) (jax#39795). So this tries
expm1 at -20 and -30 and elu at -20, each against numpy's exp(x). Exit 0: each gradient within 1% of exp(x);
1: one is not (0 from the cancellation; the first such is named).
"""
import sys

import numpy as np
import jax
import jax.numpy as jnp

bad = []
for name, f, x in (("expm1", jnp.expm1, -20.0), ("expm1", jnp.expm1, -30.0), ("nn.elu", jax.nn.elu, -20.0)):
    got = float(jax.grad(f)(np.float32(x)))
    want = float(np.exp(x))
    if not abs(got - want) <= 0.01 * want:
        bad.append(f"d/dx {name}(x) at {x} in float32: {got!r} (numpy exp({x}): {want!r})")
print(bad[0] if bad else "d/dx expm1 at -20, -30 and elu at -20 in float32: exp(x) within 1%")
sys.exit(1 if bad else 0)
