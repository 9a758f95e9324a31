"""The workaround of arange-nonzero-start-constant: jnp.arange(stop - start) + start. Exit 0: its lowered program
is not a folded constant (under 10x arange(0, N)'s text) and its values are right; 1: not."""
import sys

import numpy as np
import jax
import jax.numpy as jnp

N = 1_000_000
control = len(jax.jit(lambda: jnp.arange(0, N)).lower().as_text())
shifted = len(jax.jit(lambda: jnp.arange(N - 1) + 1).lower().as_text())
values = np.asarray(jax.jit(lambda: jnp.arange(N - 1) + 1)())
right = values[0] == 1 and values[-1] == N - 1 and values.size == N - 1
print(f"lowered program text: arange(0, N) {control} chars, arange(N - 1) + 1 {shifted} chars; values right: {right}")
sys.exit(0 if shifted < 10 * control and right else 1)
