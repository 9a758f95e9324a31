"""The workaround of frexp-zero-gradient: differentiate x * 2.0 ** -stop_gradient(jnp.frexp(x)[1]). Exit 0: the
mantissa's derivative at the check's points; 1: not."""
import sys

import numpy as np
import jax
import jax.numpy as jnp

values = np.array([3.0, 0.5, 10.0], dtype=np.float32)
mantissa = lambda v: v * 2.0 ** -jax.lax.stop_gradient(jnp.frexp(v)[1]).astype(v.dtype)  # noqa: E731
got = np.asarray(jax.vmap(jax.grad(mantissa))(values))
want = np.ldexp(1.0, -np.frexp(values)[1])
print("d mantissa / dx (the workaround) at", values.tolist(), ":", got.tolist(), "want", want.tolist())
sys.exit(0 if np.allclose(got, want) else 1)
