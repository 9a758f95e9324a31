"""Is jax.sharding.PartitionSpec still a tuple? (A pure-Python change between jax 0.6.0 and 0.6.1.)

JAX 0.6.1's changelog: "`jax.sharding.PartitionSpec` no longer inherits from a tuple." Code that
indexed or unpacked specs as tuples broke. Exit 0 (good) while it is a tuple, 1 (bad) once it is not:

    nox -s bisect -- --script examples/partitionspec_tuple.py --good 0.6.0 --bad 0.6.1 --commits --jax-repo DIR

The change lies after JAX renamed its compiled module to _jax (2025-04-23), so its commit cannot
import on jaxlib 0.6.0, although its jax/version.py accepts 0.6.0.
"""

import sys

from jax.sharding import PartitionSpec

spec = PartitionSpec("x", None)
print(f"PartitionSpec('x', None) is a tuple: {isinstance(spec, tuple)} ({type(spec).__mro__})")
sys.exit(0 if isinstance(spec, tuple) else 1)
