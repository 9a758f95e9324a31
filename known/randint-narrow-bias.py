"""jax.random.randint for 8-bit integers drew from a biased distribution (jax#27702).

100,000 uint8 draws in [0, 200): each value should come about 500 times. The low values [0, 56) came
more often than the high ones. Exit 0: the two halves' mean counts agree within 5% (Poisson noise on
these counts is about 0.5%); the key is fixed, so the verdict is deterministic.
"""
import sys

import numpy as np
import jax

draws = np.asarray(jax.random.randint(jax.random.PRNGKey(7534892), (100_000,), 0, 200, dtype="uint8"))
counts = np.bincount(draws, minlength=200).astype(float)
low, high = counts[:56].mean(), counts[56:].mean()
print(f"mean count of values 0..55: {low:.1f}, of 56..199: {high:.1f} (uniform: 500 each)")
sys.exit(0 if abs(low / high - 1.0) < 0.05 else 1)
