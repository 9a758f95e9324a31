"""The workaround of randint-narrow-bias: draw in int32 and cast to uint8. The check's 100,000 draws of 0..199;
exit 0: values 0..55 as frequent as 56..199 (within 5%); 1: not."""
import sys

import numpy as np
import jax
import jax.numpy as jnp

draws = np.asarray(jax.random.randint(jax.random.PRNGKey(7534892), (100_000,), 0, 200).astype(jnp.uint8))
counts = np.bincount(draws, minlength=200).astype(float)
low, high = counts[:56].mean(), counts[56:].mean()
print(f"drawn in int32, cast: mean count of 0..55: {low:.1f}, of 56..199: {high:.1f} (uniform: 500 each)")
sys.exit(0 if abs(low / high - 1.0) < 0.05 else 1)
