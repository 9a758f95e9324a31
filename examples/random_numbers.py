"""Did jax.random start drawing other numbers? Exit 0 when it draws what jax 0.4.35 drew, 1 when not.

A triager's repro for "my results changed after upgrading": the same key must
give the same numbers. They changed in jax 0.5.0, whose default became
``jax_threefry_partitionable=True``; exporting ``JAX_THREEFRY_PARTITIONABLE=1``
changes them in every release, which is why a bisect's probes are keyed by the
JAX/XLA variables that are set (docs/bisect.md).
"""

import sys

import jax

EXPECTED = [0.96532142162323, 0.31468164920806885, 0.6330299377441406]  # jax 0.4.35, default flags

drawn = jax.random.uniform(jax.random.PRNGKey(0), (3,)).tolist()
print(f"jax {jax.__version__}: jax_threefry_partitionable={jax.config.jax_threefry_partitionable}")
print(f"uniform(PRNGKey(0), (3,)) = {drawn}")
same = all(abs(a - b) < 1e-6 for a, b in zip(drawn, EXPECTED))
print("the same numbers as jax 0.4.35" if same else f"other numbers than jax 0.4.35's {EXPECTED}")
sys.exit(0 if same else 1)
